"""The shared base of human work: a unit of work handed to a person, and their answer.

Every type of human work (vetting, pairwise comparison, expert survey, direct assessment) is
a subclass of `Judgement` (the person's answer to one unit); pooled work, which anyone of the
study may take while k answers are missing, hands out `LeasedSlot` rows and remembers what a
person put back in a `Skip` row. The services on top are generic (apps/annotation/services/
work.py); docs/annotation.md, "One pattern for human work", tells how a new type plugs in.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from django.conf import settings
from django.db import models

from apps.annotation.models.study import Study


class RealJudgements(models.Manager):
    """Answers that are data: a control item's answer (`control` set) is left out, so it never
    counts in progress figures, agreement or reports (docs/annotation.md, "Control items")."""

    def get_queryset(self) -> models.QuerySet[Any]:
        return super().get_queryset().filter(control__isnull=True)


class Judgement(models.Model):
    """A person's answer to one unit of work in a study (abstract).

    A subclass says what identifies its unit (`unit_fields`, e.g. the perturbation, or the
    perturbation and the criterion), what an answer records (`answer_fields`: saved, before
    and after, in each `JudgementChange`), which field agreement compares (`value_field`),
    and its link in the history (`judgement_kind` and `judgement_label`, and `change_field`:
    its foreign key on `JudgementChange`, added by `judgement_links`). `objects` leaves control
    items' answers out; `answers` has them.
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="%(class)ss")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="%(class)ss"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    control = models.ForeignKey(
        "annotation.ControlItem",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
        help_text="Set when this answers a control item: then it is not data.",
    )

    judgement_kind: ClassVar[str]
    judgement_label: ClassVar[str]
    change_field: ClassVar[str]
    unit_fields: ClassVar[tuple[str, ...]]
    answer_fields: ClassVar[tuple[str, ...]]
    value_field: ClassVar[str]
    #: The person's field (experts vote as `expert`).
    person_field: ClassVar[str] = "annotator"

    #: Real answers only (the default): what figures and reports read.
    objects = RealJudgements()
    #: Every answer, a control item's too: what the person sees of their own work.
    answers = models.Manager()  # noqa: DJ012 (a manager, second so `objects` is the default)

    class Meta:
        abstract = True

    def unit_lookup(self) -> dict[str, Any]:
        """The unit this answers, as a lookup (``{"perturbation_id": 3}``)."""
        return unit_of(self, self.unit_fields)

    @classmethod
    def unit_from(cls, data: Mapping[str, Any]) -> dict[str, Any]:
        """A unit from the API's fields or a page's URL (`perturbation` or
        `perturbation_pk`)."""
        unit = {}
        for name in cls.unit_fields:
            value = data.get(name, data.get(f"{name}_pk"))
            if value is not None:
                unit[f"{name}_id"] = int(value)
        return unit


def unit_of(row: Any, fields: tuple[str, ...]) -> dict[str, Any]:
    """The lookup of a unit from any row that carries its fields (a slot or a judgement)."""
    return {f"{name}_id": getattr(row, f"{name}_id") for name in fields}


def judgement_types() -> list[type[Judgement]]:
    """Every concrete type of judgement (their models are all imported by models/__init__)."""
    return [model for model in Judgement.__subclasses__() if not model._meta.abstract]


def judgement_choices() -> list[tuple[str, str]]:
    """`JudgementChange.judgement`'s choices: every type's kind and label (a callable, so a new
    type needs no migration of the history)."""
    return [(model.judgement_kind, model.judgement_label) for model in judgement_types()]


def judgement_links(change: type[models.Model]) -> None:
    """Give the history (`change`, `JudgementChange`) its foreign key to each type of judgement
    (`change_field`, reverse `changes`), once every type's module is imported (models/__init__):
    a type declares only itself."""
    have = {field.name for field in change._meta.local_fields}
    for model in judgement_types():
        if model.change_field not in have:
            link = models.ForeignKey(
                model, null=True, blank=True, on_delete=models.CASCADE, related_name="changes"
            )
            change.add_to_class(model.change_field, link)


class LeasedSlot(models.Model):
    """One of the k answers a unit of pooled work needs: open, leased to a person, or done.

    Any annotator of the study may claim an open slot (services/leases.py: under SKIP LOCKED,
    by a conditional update), holding it until the lease runs out. A subclass adds the unit
    (`unit_field`), the constraints that make one person hold at most one slot of a unit (over
    every slot, not only taken ones: empty annotators never clash, and a partial index looked
    empty to the planner, which then read it for the held slot), and a partial index of the
    slots held and not done (`slot_indexes`; docs/annotation.md, "Speed").
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="+")
    slot = models.PositiveSmallIntegerField()
    position = models.PositiveIntegerField(help_text="Copied from the plan: the work order.")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    leased_until = models.DateTimeField(null=True, blank=True)
    lapsed_annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Who held the lease before it ran out and the slot was handed on.",
    )
    done_at = models.DateTimeField(null=True, blank=True)

    unit_field: ClassVar[str]

    class Meta:
        abstract = True

    def __str__(self) -> str:
        return f"{self.study_id}/{getattr(self, f'{self.unit_field}_id')}#{self.slot}"


def slot_meta(name: str, unit: tuple[str, ...]) -> Any:
    """A kind's `LeasedSlot` Meta: slots in work order, each slot number and each person once
    per unit (``unit``: the fields that name it), and `slot_indexes(name)`."""

    class Meta:
        ordering = ["study", "position", "slot"]
        constraints = [
            models.UniqueConstraint(fields=[*unit, "slot"], name=name),
            models.UniqueConstraint(fields=[*unit, "annotator"], name=f"{name}_once_per_annotator"),
        ]
        indexes = slot_indexes(name)

    return Meta


def slot_indexes(prefix: str) -> list[models.Index]:
    """The indexes every kind of `LeasedSlot` has, named `<prefix>_open`, `_mine` and `_held`:
    the study's open slots in work order (the queue), a person's slots, and the slots held and
    not done, by person in work order (the hand-out's first look-up, docs/annotation.md,
    "Speed")."""
    return [
        models.Index(
            fields=["study", "position", "slot"],
            condition=models.Q(done_at__isnull=True),
            name=f"{prefix}_open",
        ),
        models.Index(fields=["annotator", "study", "done_at"], name=f"{prefix}_mine"),
        models.Index(
            fields=["annotator", "study", "position", "slot"],
            condition=models.Q(done_at__isnull=True, annotator__isnull=False),
            name=f"{prefix}_held",
        ),
    ]


class Skip(models.Model):
    """A unit of pooled work a person put back: offered to them again only when nothing else
    is left. A subclass adds the unit."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="+")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    created_at = models.DateTimeField(auto_now=True)

    unit_field: ClassVar[str]

    class Meta:
        abstract = True

    def __str__(self) -> str:
        return f"{self.annotator_id} skipped {getattr(self, f'{self.unit_field}_id')}"


def skip_meta(name: str, unit_field: str) -> Any:
    """A kind's `Skip` Meta: one skip per person and unit, oldest first."""

    class Meta:
        ordering = ["created_at"]
        constraints = [
            models.UniqueConstraint(fields=["study", "annotator", unit_field], name=name)
        ]

    return Meta
