"""Gold validation (docs/methods.md §6): annotators label each adversarial text good or not
good, so the gold judge's labels can be checked against people's.

Pooled work on the shared base (models/base.py): each adversarial perturbation of a study's
plan has `GOLD_CHECK_OVERLAP` `GoldCheckSlot` rows, one per label it needs (three in the
paper); `GoldCheck` is one annotator's label.
"""

from __future__ import annotations

from django.db import models

from apps.annotation.models.base import Judgement, LeasedSlot, Skip, slot_indexes
from apps.annotation.models.study import Study
from apps.corpus.models import Perturbation

#: Labels each adversarial text gets (the paper's three annotators).
GOLD_CHECK_OVERLAP = 3


class GoldCheckSlot(LeasedSlot):
    """One of the labels an adversarial text needs: open, leased to an annotator, or done."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="gold_check_slots")
    perturbation = models.ForeignKey(Perturbation, on_delete=models.CASCADE, related_name="+")

    unit_field = "perturbation"

    class Meta:
        ordering = ["study", "position", "slot"]
        constraints = [
            models.UniqueConstraint(
                fields=["study", "perturbation", "slot"], name="gold_check_slot"
            ),
            models.UniqueConstraint(
                fields=["study", "perturbation", "annotator"],
                name="gold_check_slot_once_per_annotator",
            ),
        ]
        indexes = slot_indexes("gold_check_slot")

    def __str__(self) -> str:
        return f"{self.study_id}/{self.perturbation_id}#{self.slot}"


class GoldCheckSkip(Skip):
    perturbation = models.ForeignKey(Perturbation, on_delete=models.CASCADE, related_name="+")

    class Meta:
        ordering = ["created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["study", "annotator", "perturbation"], name="gold_check_skip_once"
            )
        ]

    def __str__(self) -> str:
        return f"{self.annotator_id} skipped {self.perturbation_id}"


class GoldCheck(Judgement):
    """One annotator's label of one adversarial text: good (True) or not good (False)."""

    perturbation = models.ForeignKey(Perturbation, on_delete=models.CASCADE, related_name="+")
    good = models.BooleanField()

    judgement_kind, change_field = "gold-check", "gold_check"
    judgement_label = "Gold validation"
    unit_fields = ("perturbation",)
    answer_fields = ("good",)
    value_field = "good"

    class Meta:
        ordering = ["study", "created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["study", "perturbation", "annotator"], name="one_gold_check_per_annotator"
            )
        ]
        indexes = [models.Index(fields=["study", "annotator", "created_at"])]

    def __str__(self) -> str:
        return f"{self.annotator_id} on {self.perturbation_id}: {'good' if self.good else 'not'}"
