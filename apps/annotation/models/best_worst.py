"""Best-worst scaling (SPEC §10): a person sees a tuple of texts of one source item (its original
and the study's perturbed texts of it) under one criterion, and picks the best and the worst.

Pooled work on the shared base (models/base.py): each tuple (`BestWorstTuple`, built by the
standard design, apps/annotation/bws_design.py) has r `BestWorstSlot` rows, one per answer it
needs (docs/annotation.md, "Best-worst scaling").
"""

from __future__ import annotations

from typing import Any

from django.db import models
from django.db.models import F, Q

from apps.annotation.models.base import Judgement, LeasedSlot, Skip, slot_indexes
from apps.annotation.models.study import Study
from apps.catalog.models import Criterion
from apps.corpus.models import SourceItem

#: A text of a tuple: a perturbation's id, or None for the item's original.
Text = int | None


class BestWorstTuple(models.Model):
    """One tuple of an item's texts x criterion, in a shuffled work order. `texts` lists the
    perturbations shown, in the order shown (null: the item's original). A tuple the study no
    longer asks for (its item's texts changed, or its criterion dropped) is kept `active=False`
    once answered."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="best_worst_tuples")
    item = models.ForeignKey(SourceItem, on_delete=models.CASCADE, related_name="+")
    criterion = models.ForeignKey(Criterion, on_delete=models.PROTECT, related_name="+")
    number = models.PositiveIntegerField(help_text="The tuple's number among its item's.")
    texts = models.JSONField(help_text="Perturbation ids in the order shown; null: the original.")
    position = models.PositiveIntegerField(help_text="Work order (a seeded shuffle).")
    active = models.BooleanField(default=True)

    class Meta:
        ordering = ["study", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["study", "item", "criterion", "number"], name="best_worst_tuple"
            )
        ]

    def __str__(self) -> str:
        return f"{self.study_id}/i{self.item_id}/{self.criterion_id}#{self.number}"

    @property
    def size(self) -> int:
        return len(self.texts)

    def text_keys(self) -> list[tuple[int, Text]]:
        """The texts shown, as (item, perturbation or None): what scores are keyed by."""
        return [(self.item_id, text) for text in self.texts]


class BestWorstSlot(LeasedSlot):
    """One of the r answers a tuple needs: open, leased to an annotator, or done."""

    unit = models.ForeignKey(BestWorstTuple, on_delete=models.CASCADE, related_name="slots")

    unit_field = "unit"

    class Meta:
        ordering = ["study", "position", "slot"]
        constraints = [
            models.UniqueConstraint(fields=["unit", "slot"], name="best_worst_slot"),
            models.UniqueConstraint(
                fields=["unit", "annotator"], name="best_worst_slot_once_per_annotator"
            ),
        ]
        indexes = slot_indexes("best_worst_slot")

    def __str__(self) -> str:
        return f"{self.unit_id}#{self.slot}"


class BestWorstSkip(Skip):
    unit = models.ForeignKey(BestWorstTuple, on_delete=models.CASCADE, related_name="+")

    class Meta:
        ordering = ["created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["study", "annotator", "unit"], name="best_worst_skip_once"
            )
        ]

    def __str__(self) -> str:
        return f"{self.annotator_id} skipped {self.unit_id}"


class BestWorst(Judgement):
    """One annotator's best and worst of one tuple: places in the tuple's `texts`, 0 first."""

    unit = models.ForeignKey(BestWorstTuple, on_delete=models.CASCADE, related_name="best_worsts")
    best = models.PositiveSmallIntegerField()
    worst = models.PositiveSmallIntegerField()

    judgement_kind, change_field = "best-worst", "best_worst"
    unit_fields = ("unit",)
    answer_fields = ("best", "worst")
    value_field = "best"

    class Meta:
        ordering = ["study", "created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["unit", "annotator"], name="one_best_worst_per_annotator"
            ),
            models.CheckConstraint(condition=~Q(best=F("worst")), name="best_worst_differ"),
        ]
        indexes = [models.Index(fields=["study", "annotator", "created_at"])]

    def __str__(self) -> str:
        return f"{self.annotator_id} on {self.unit_id}: best {self.best}, worst {self.worst}"

    def shown(self) -> tuple[list[tuple[int, Text]], tuple[int, Text], tuple[int, Text]]:
        """(the texts shown, the best, the worst), as `BestWorstTuple.text_keys`."""
        keys: list[Any] = self.unit.text_keys()
        return keys, keys[self.best], keys[self.worst]
