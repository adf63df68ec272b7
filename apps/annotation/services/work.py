"""One pattern for human work: a unit of work handed to a person, and their answer saved once.

A kind of work (vetting, comparison, direct assessment, the expert survey...) is a `Work`:
its unit and answer (a `Judgement` subclass, `model`), who does it, how units are handed out
(`next`, `skip`: pooled slots with leases in `PooledWork`, slots owned by one annotator, or
all at once), its checks and its page (`checked`, `values`, `item`), and what it declares of
the save: the row saves of a unit queue on (`lock`), what the answer reads of its unit
(`reads`), what a new answer counts (`counts`), the slots it closes (`slot_model`). The one
`submit` below reads check → lock → write → after; its statements are built from those
declarations in the SQL layer (apps/answer_sql.py). What the study's set-up asks of a kind is
its `setup` (`Setup`); what is read of its progress, selectors/work_counts.py. The pages
(views/work.py) and the API (api/work.py) are generic over `Work`; docs/annotation.md, "One
pattern for human work", lists what a new kind provides.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar, Generic, TypeVar

from django.db import models
from django.utils import timezone

from apps import answer_sql
from apps import sql_rows as rows
from apps.accounts.models import Role
from apps.annotation.models import (
    CONTROL_UNITS,
    ControlServe,
    Judgement,
    JudgementChange,
    Study,
    judgement_version,
    unit_of,
)
from apps.annotation.selectors.plan_preview import KindPreview
from apps.annotation.services.errors import StaleJudgement, WorkRefused
from apps.annotation.services.saving import (
    created_with_change,
    locked_or_created,
    snapshot,
    submit_once,
)
from apps.answer_sql import Scalar, Through, UnitLock, UnitRead

J = TypeVar("J")
Unit = dict[str, Any]  # a unit's lookup: {"perturbation_id": 3, "criterion_id": 7}


@dataclass(frozen=True)
class Saved(Generic[J]):
    """A saved judgement; `new` is False when the submit was a repeat of one already saved."""

    judgement: J
    new: bool


@dataclass(frozen=True)
class Locked:
    """What the save's first step found: the unit (its `Through` fields given their
    values), the person's earlier answer, their slot marked done ((slot or None), or None
    when `close` does it) and what `values` gets as `held`."""

    unit: Unit
    earlier: Any | None
    closed: tuple[Any | None] | None
    held: Any


@dataclass(frozen=True)
class PlanPart:
    """What building the plan made of one type of work: its slots, and why the design could
    not be met, if it could not."""

    slots: int
    problem: str = ""


class Setup:
    """What a kind of work asks of the study's set-up (a kind's `Work.setup`): whether the
    study asks for it, its slots in the plan, its row of the new study's plan preview and
    what the demo study asks of it."""

    def opted_in(self, study: Study) -> bool:
        """Whether the study asks for this work (its people see the button)."""
        return True

    def plan(self, work: Any, *, study: Study) -> PlanPart | None:
        """Bring the work's slots up to date with the study (inside the plan's transaction,
        after the study's perturbations are); None for work without slots."""
        return None

    def preview(self, choices: Mapping[str, Any]) -> KindPreview | None:
        """What the plan of these unsaved set-up choices would hand out of this work, when it
        is the kind's own (its settings, `study_settings`); None: the plan preview counts it
        (selectors/plan_preview.py) or the choices do not ask for it."""
        return None

    def demo(self, study: Study) -> None:
        """Ask the demo study (apps/annotation/demo.py) for this work, where the kind's own
        settings decide whether it is asked for."""


class Work:
    """A type of human work on the shared pattern (subclass it, then `register` one)."""

    slug: ClassVar[str]  # "vetting": progress keys, API route names, the plan summary
    name: ClassVar[str]  # "Vetting"
    position: ClassVar[int]  # where it stands in the study's pipeline
    action: ClassVar[str]  # the button that starts it: "Vet perturbations"
    model: ClassVar[type[Judgement]]
    role: ClassVar[str] = Role.ANNOTATOR
    setup: ClassVar[Setup] = Setup()
    #: What a repeated idempotency key must have submitted again (else 409).
    answer_keys: ClassVar[tuple[str, ...]]
    #: What the answer is called in messages ("verdict").
    answer_noun: ClassVar[str] = "answer"
    skipped_message: ClassVar[str] = "Skipped: put back in the queue"
    #: The progress page's count of answers: (its key in the API, label, id on the page).
    answers_figure: ClassVar[tuple[str, str, str]]
    #: What the list of a person's last answers shows of each, beside the unit (related rows).
    recent_related: ClassVar[tuple[str, ...]] = ()
    #: Whether agreement statistics compare its answers (`value_field`).
    agreement: ClassVar[bool] = True

    # What the save declares (apps/answer_sql.py builds its statements from them).
    #: The slots whose row of the person and unit the save's first step marks done.
    slot_model: ClassVar[type[models.Model] | None] = None
    #: The row saves of a unit queue on, locked first (its row is `values`'s `held`).
    lock: ClassVar[UnitLock | None] = None
    #: What `values` needs of the unit, read by the first step (`held`, via `read_back`).
    reads: ClassVar[UnitRead | Scalar | None] = None
    #: Unit fields the request does not give, found from the answer.
    through: ClassVar[tuple[Through, ...]] = ()
    #: After a new answer, the unit's other answers counted by this field (`counted`).
    counts: ClassVar[str | None] = None

    # --- handing out -----------------------------------------------------------------------

    def next(
        self, *, study: Study, person, now: datetime | None = None, page: bool = False
    ) -> Any | None:
        """The unit (a slot) this person should do now, or None when nothing is left.
        `page`: a page shows it (a type may read the page's item with the hand-out, as the
        slot's `item`)."""
        return None

    def holds(self, *, study: Study, person) -> bool:
        """Whether the person holds a real unit they have not answered (it comes first)."""
        return False

    def waiting(self, *, study: Study, person, now: datetime) -> bool:
        """Whether real work is left for the person (control items never come alone)."""
        return False

    def slots_of(self, *, study: Study, person) -> Any | None:
        """The person's slots (a queryset with the unit's fields), if the type has slots: a
        control item is never one of their units."""
        return None

    def skip(self, *, study: Study, person, unit: Unit) -> None:
        raise WorkRefused(f"{self.name} cannot be skipped.")

    def release(self, *, study: Study, person) -> None:
        """Give back what this person holds and has not finished (they left the study)."""

    def item(self, *, study: Study, person, unit: Unit, held: bool | None = None) -> Any:
        """What the page shows of one unit (404 unless it is this person's); `held`: the
        caller knows the person holds it (it was just handed out)."""
        raise NotImplementedError

    # --- saving: check, lock, write, after -------------------------------------------------

    def submit(
        self,
        *,
        study: Study,
        person,
        unit: Unit,
        answer: Mapping[str, Any],
        idempotency_key: uuid.UUID,
        based_on: int | None = None,
        active_seconds: float | None = None,
    ) -> Saved[Any]:
        """Save (or change) this person's answer on the unit; a repeated key saves nothing
        again, a key reused for another answer is refused (KeyReused), and a `based_on`
        version that is no longer the answer's (another tab saved since) is refused
        (StaleJudgement). Nothing is saved on any refusal. Check, lock, write, after.
        `active_seconds` (time on task, as the page measured it) goes on the change."""
        unit = self.checked(study=study, unit=unit, answer=answer)
        for field in self.through:  # found by the answer (`read_back` gives its value)
            unit = {**unit, field.field: field.value(answer)}
        # A control item (services/controls.py) is answered like any unit, but the answer is
        # not data: no slot, no consensus, `control` set.
        served = served_control(self, study=study, person=person, unit=unit)
        request = _Request(study, person, unit, answer, idempotency_key, served)

        def save() -> JudgementChange:
            locked = self._locked(request)
            if based_on is not None and judgement_version(locked.earlier) != based_on:
                raise StaleJudgement(self._stale_message(locked.earlier))
            change, counted = self._written(request, locked, based_on, active_seconds)
            self._after(request, locked, change.target, counted)
            return change

        change, new = submit_once(
            key=idempotency_key,
            user=person,
            judgement=self.model.judgement_kind,
            answer={name: answer[name] for name in self.answer_keys},
            save=save,
            asked_in_save=True,
        )
        return Saved(change.target, new)

    def checked(self, *, study: Study, unit: Unit, answer: Mapping[str, Any]) -> Unit:
        """Refuse a malformed answer (ValueError) or a unit outside the study (WorkRefused),
        before anything is written; return the full unit."""
        return unit

    def read_back(self, *, unit: Unit, value: Any) -> tuple[Unit, Any]:
        """The unit (its `through` fields given their values) and `values`'s `held`, from
        what `reads` read; a refusal here (WorkRefused) rolls the save back."""
        return unit, value

    def close(
        self,
        *,
        study: Study,
        person,
        unit: Unit,
        revisit: bool,
        closed: tuple[Any | None] | None = None,
    ) -> Any | None:
        """Mark the person's slot of the unit done, or refuse work never handed to them
        (`revisit`: they are changing an answer they gave). Returns the slot, if any.
        `closed`: (their slot, already marked done, or None) when the save's first read did
        it (see `slot_model`)."""
        return None

    def values(
        self,
        *,
        study: Study,
        person,
        unit: Unit,
        answer: Mapping[str, Any],
        earlier: Any | None,
        slot: Any | None,
        held: Any = None,
    ) -> dict[str, Any]:
        """The judgement's fields: from the answer, and what the earlier answer or the slot
        fixed (the group, the order the texts were shown in), or what the save locked or
        read of the unit (`held`)."""
        raise NotImplementedError

    def after_save(self, *, study: Study, judgement: Any, held: Any, counted: Any = None) -> None:
        """What else changes with the answer (in the same transaction); `counted`: the
        unit's other answers counted (`counts`) when the answer is new, else None."""

    def label(self, judgement: Any) -> str:
        """The answer in words, for messages."""
        return str(getattr(judgement, judgement.value_field))

    # --- the save's steps ------------------------------------------------------------------

    def _locked(self, request: _Request) -> Locked:
        """The save's first step (answer_sql.first_step): the unit's lock, the key's check,
        the slot closed (a control item's answer closes none), the earlier answer locked,
        and what `values` reads."""
        study, person, unit, served = request.study, request.person, request.unit, request.served
        lock = None if served else self.lock
        locking = None
        if lock is not None:
            locking = lock.sql, lock.params(study=study, person=person, unit=unit)
        read = None
        if self.reads is not None:
            read = answer_sql.read_of(
                self.reads, study=study, person=person, unit=unit, answer=request.answer
            )
        saving = answer_sql.Save(
            self.model,
            self.model.person_field,
            JudgementChange,
            None if served else self.slot_model,
        )
        earlier, closed, value = answer_sql.first_step(
            saving,
            study=study,
            person=person,
            unit=unit,
            key=request.key,
            read=read,
            lock=locking,
        )
        held = None
        if lock is not None:
            held = lock.load(value)
            if held is None:
                raise WorkRefused(lock.refusal)
        elif read is not None:
            unit, held = self.read_back(unit=unit, value=value)
        return Locked(unit, earlier, closed, held)

    def _written(
        self,
        request: _Request,
        locked: Locked,
        based_on: int | None,
        active_seconds: float | None,
    ) -> tuple[JudgementChange, Any]:
        """The answer and the change recording it; and the counts of `counts` (a new
        answer)."""
        model, unit, earlier = self.model, locked.unit, locked.earlier
        study, person, served = request.study, request.person, request.served
        lookup = {"study": study, model.person_field: person, **unit}
        slot = None
        if served is None:
            revisit = earlier is not None
            slot = self.close(
                study=study, person=person, unit=unit, revisit=revisit, closed=locked.closed
            )
        values = self.values(
            study=study,
            person=person,
            unit=unit,
            answer=request.answer,
            earlier=earlier,
            slot=slot,
            held=locked.held,
        )
        if served is not None:
            values["control"] = served.control
        if earlier is None:  # the usual case: both rows in one statement
            counting = None
            if served is None and self.counts is not None:
                counting = answer_sql.counted(model, self.counts, study=study, unit=unit)
            created = created_with_change(
                model,
                values={**lookup, **values},
                fields=model.answer_fields,
                user=person,
                key=request.key,
                extra=counting,
                active_seconds=active_seconds,
            )
            if created is not None:
                return created
            if based_on is not None:
                # Created meanwhile (another tab), after this request read no answer.
                now = model.answers.filter(**lookup).first()
                raise StaleJudgement(self._stale_message(now))
        judgement, before = locked_or_created(
            model,
            lookup=lookup,
            values=values,
            fields=model.answer_fields,
            locked=earlier,
            looked_up=earlier is not None,
        )
        after = snapshot(judgement, model.answer_fields)
        change = JudgementChange.of(
            judgement,
            user=person,
            key=request.key,
            before=before,
            after=after,
            active_seconds=active_seconds,
        )
        rows.insert(change)  # a repeated key still raises (IntegrityError)
        return change, None

    def _after(self, request: _Request, locked: Locked, judgement: Any, counted: Any) -> None:
        """What changes with the answer: the kind's `after_save`, or the control marked
        answered."""
        if request.served is None:
            self.after_save(
                study=request.study, judgement=judgement, held=locked.held, counted=counted
            )
            return
        ControlServe.objects.filter(pk=request.served.pk, answered_at__isnull=True).update(
            answered_at=timezone.now()
        )

    def _stale_message(self, earlier: Any | None) -> str:
        now = self.label(earlier) if earlier is not None else "none"
        return (
            f"Your {self.answer_noun} on this item was changed in another tab or window since "
            f"this page was opened (it is now: {now}). Nothing was saved; reload the page to "
            "see it and answer again."
        )


@dataclass(frozen=True)
class _Request:
    """One submit: who answers what, with which key; the control served on the unit, if
    it was one."""

    study: Study
    person: Any
    unit: Unit
    answer: Mapping[str, Any]
    key: uuid.UUID
    served: ControlServe | None


def handed_item(work: Work, *, study: Study, person, slot: Any) -> Any:
    """`item` of the unit just handed out (`slot`, which the person holds): the one the
    hand-out read when it could (services/leases.py, a kind's `page`), else read now."""
    if getattr(slot, "item", None) is not None:
        return slot.item
    unit = unit_of(slot, work.model.unit_fields)
    return work.item(study=study, person=person, unit=unit, held=True)


def served_control(work: Work, *, study: Study, person, unit: Unit) -> ControlServe | None:
    """The control this person was served on this unit, if the unit was one for them (only
    while the study mixes control items in: turned off, what was served and not answered is
    dropped)."""
    if not study.control_every or work.slug not in CONTROL_UNITS or not unit:
        return None
    lookup = {f"control__{name}": value for name, value in unit.items()}
    return (
        ControlServe.objects.filter(study=study, annotator=person, work=work.slug, **lookup)
        .select_related("control")
        .first()
    )
