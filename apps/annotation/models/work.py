"""Work slots: the units of work a study's plan hands out, and who holds them.

* A perturbation needing k vettings has exactly k `VettingSlot` rows (pooled work, see
  models/base.py `LeasedSlot`). Any annotator of the study may claim an open one (under a row
  lock), holding it until its lease runs out; so an item never gets more than k annotators,
  however many ask at once (see services/leases.py).
* A comparable perturbation has one `ComparisonSlot` per (group, criterion) of the criteria
  design; each belongs to the one annotator of that group who holds that criterion.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from apps.annotation.models.base import LeasedSlot, Skip, skip_meta, slot_meta
from apps.annotation.models.study import Study
from apps.catalog.models import Criterion
from apps.corpus.models import Perturbation


class VettingSlot(LeasedSlot):
    """One of the k vettings a perturbation needs: open, leased to an annotator, or done."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="vetting_slots")
    perturbation = models.ForeignKey(Perturbation, on_delete=models.CASCADE, related_name="+")
    unit_field = "perturbation"
    Meta = slot_meta("vetting_slot", ("study", "perturbation"))


class ComparisonSlot(models.Model):
    """One pair x criterion for one group, owned by the annotator the design gives it to."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="comparison_slots")
    perturbation = models.ForeignKey(Perturbation, on_delete=models.CASCADE, related_name="+")
    criterion = models.ForeignKey(Criterion, on_delete=models.CASCADE, related_name="+")
    group = models.PositiveSmallIntegerField()
    position = models.PositiveIntegerField(help_text="Copied from the plan: the work order.")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="comparison_slots",
    )
    skipped = models.BooleanField(default=False, help_text="Put back: offered again last.")
    done_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["study", "position", "criterion", "group"]
        constraints = [
            models.UniqueConstraint(
                fields=["study", "perturbation", "criterion", "group"], name="comparison_slot"
            )
        ]
        indexes = [
            models.Index(
                fields=["annotator", "study", "skipped", "position"],
                condition=Q(done_at__isnull=True),
                name="comparison_slot_open",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.study_id}/{self.perturbation_id}/{self.criterion_id} g{self.group}"


class VettingSkip(Skip):
    """A vetting an annotator put back: offered to them again only when nothing else is left."""

    perturbation = models.ForeignKey(Perturbation, on_delete=models.CASCADE, related_name="+")
    unit_field = "perturbation"
    Meta = skip_meta("vetting_skip_once", "perturbation")
