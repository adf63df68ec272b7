"""Gold validation (docs/methods.md §6): annotators label each adversarial text good or not
good, so the gold judge's labels can be checked against people's.

Pooled work on the shared base (models/base.py): each adversarial perturbation of a study's
plan has `GOLD_CHECK_OVERLAP` `GoldCheckSlot` rows, one per label it needs (three in the
paper); `GoldCheck` is one annotator's label.
"""

from __future__ import annotations

from django.db import models

from apps.annotation.models.base import Judgement, LeasedSlot, Skip, skip_meta, slot_meta
from apps.annotation.models.study import Study
from apps.corpus.models import Perturbation

#: Labels each adversarial text gets (the paper's three annotators).
GOLD_CHECK_OVERLAP = 3


class GoldCheckSlot(LeasedSlot):
    """One of the labels an adversarial text needs: open, leased to an annotator, or done."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="gold_check_slots")
    perturbation = models.ForeignKey(Perturbation, on_delete=models.CASCADE, related_name="+")
    unit_field = "perturbation"
    Meta = slot_meta("gold_check_slot", ("study", "perturbation"))


class GoldCheckSkip(Skip):
    perturbation = models.ForeignKey(Perturbation, on_delete=models.CASCADE, related_name="+")
    unit_field = "perturbation"
    Meta = skip_meta("gold_check_skip_once", "perturbation")


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
