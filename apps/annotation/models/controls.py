"""Control items: units with a known answer (gold), mixed unannounced into an annotator's queue
at the rate the study sets (`Study.control_every`), to measure each annotator's accuracy.

A `ControlItem` is a unit of one type of work (vetting: a perturbation; comparison: a
perturbation x criterion; direct assessment: a text x criterion, as an `AssessmentUnit`) with
the answer it should get. A `ControlServe` records that it was handed to one annotator (never
twice). The annotator's answer is an ordinary judgement of the type, with `control` set: the
default manager of every judgement type leaves such answers out, so they never count as real
data (docs/annotation.md, "Control items").
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import Q

from apps.annotation.models.assessment import AssessmentUnit
from apps.annotation.models.study import Study
from apps.catalog.models import Criterion
from apps.corpus.models import Perturbation

#: The types of work that take control items, and the unit fields of each.
CONTROL_UNITS: dict[str, tuple[str, ...]] = {
    "vetting": ("perturbation",),
    "comparison": ("perturbation", "criterion"),
    "assessment": ("unit",),
}


class ControlItem(models.Model):
    """A unit of one type of work with the answer it should get."""

    class Work(models.TextChoices):
        VETTING = "vetting", "Vetting"
        COMPARISON = "comparison", "Comparison"
        ASSESSMENT = "assessment", "Direct assessment"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="control_items")
    work = models.CharField(max_length=16, choices=Work.choices)
    perturbation = models.ForeignKey(
        Perturbation, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    criterion = models.ForeignKey(
        Criterion, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    unit = models.ForeignKey(
        AssessmentUnit, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    expected = models.CharField(
        max_length=16,
        blank=True,
        help_text="Vetting: the verdict; comparison: the perturbed text's outcome "
        "(worse, same, better).",
    )
    expected_score = models.SmallIntegerField(
        null=True, blank=True, help_text="Direct assessment: the rating the text should get."
    )
    tolerance = models.PositiveSmallIntegerField(
        default=0, help_text="Direct assessment: a rating this far from it still counts as right."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["study", "work", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["study", "perturbation"],
                condition=Q(work="vetting"),
                name="control_vetting_once",
            ),
            models.UniqueConstraint(
                fields=["study", "perturbation", "criterion"],
                condition=Q(work="comparison"),
                name="control_comparison_once",
            ),
            models.UniqueConstraint(
                fields=["study", "unit"],
                condition=Q(work="assessment"),
                name="control_assessment_once",
            ),
            models.CheckConstraint(
                condition=Q(work="vetting", perturbation__isnull=False)
                | Q(work="comparison", perturbation__isnull=False, criterion__isnull=False)
                | Q(work="assessment", unit__isnull=False, expected_score__isnull=False),
                name="control_has_its_unit",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.work} control {self.pk} of study {self.study_id}"

    @property
    def answer(self) -> str:
        """The known answer in words."""
        if self.work == self.Work.ASSESSMENT:
            spread = f" ± {self.tolerance}" if self.tolerance else ""
            return f"{self.expected_score}{spread}"
        return self.expected

    def is_right(self, value: object) -> bool:
        """Whether an answer (the judgement's `value_field`) matches the known one."""
        if self.work == self.Work.ASSESSMENT:
            assert self.expected_score is not None
            return abs(int(str(value)) - self.expected_score) <= self.tolerance
        return str(value) == self.expected


class ControlServe(models.Model):
    """A control item handed to one annotator (once): held until answered or skipped.

    It stands in for a slot where the pages and API read one (the unit's ids, `leased_until`).
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="+")
    control = models.ForeignKey(ControlItem, on_delete=models.CASCADE, related_name="serves")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    work = models.CharField(max_length=16, choices=ControlItem.Work.choices)
    position = models.PositiveIntegerField(help_text="The unit's place in the annotator's queue.")
    served_at = models.DateTimeField(auto_now_add=True)
    leased_until = models.DateTimeField(null=True, blank=True)
    answered_at = models.DateTimeField(null=True, blank=True)
    skipped = models.BooleanField(default=False)

    class Meta:
        ordering = ["study", "annotator", "position"]
        constraints = [
            models.UniqueConstraint(fields=["control", "annotator"], name="control_served_once")
        ]
        indexes = [models.Index(fields=["study", "annotator", "work"])]

    def __str__(self) -> str:
        return f"control {self.control_id} to {self.annotator_id} at {self.position}"

    # The unit's ids, as on a slot (unit_of reads them).
    @property
    def perturbation_id(self) -> Any:
        return self.control.perturbation_id

    @property
    def criterion_id(self) -> Any:
        return self.control.criterion_id

    @property
    def unit_id(self) -> Any:
        return self.control.unit_id
