"""Direct assessment: a person rates one text (a source item's original, or a perturbed text)
under one criterion, on the criterion's scale: Likert ratings, the way SummEval, USR and
DialSummEval were collected, so a study has its own human scores for judge-vs-human agreement.

Its settings join the study (`study_settings`). Pooled work on the shared base (models/base.py):
each text x criterion (`AssessmentUnit`) has k `AssessmentSlot` rows, one per rating it needs
(docs/annotation.md, "Direct assessment").
"""

from __future__ import annotations

from typing import Any, Protocol, cast

from django.core.validators import MinValueValidator
from django.db import models
from django.db.models import F, Q

from apps.annotation.models.base import Judgement, LeasedSlot, Skip, skip_meta, slot_meta
from apps.annotation.models.study import Study, study_settings
from apps.catalog.models import Criterion
from apps.corpus.models import Perturbation, SourceItem


class AssessedTexts(models.TextChoices):
    """Which texts direct assessment rates."""

    BOTH = "both", "Originals and perturbed texts"
    ORIGINALS = "originals", "The source items' original texts"
    PERTURBED = "perturbed", "The perturbed texts"


study_settings(
    {
        "assessment_criteria": models.ManyToManyField(
            Criterion,
            blank=True,
            related_name="assessed_in",
            verbose_name="Direct assessment criteria",
            help_text="Direct assessment: annotators rate each text (blind to whether it was "
            "perturbed) under each of these criteria, on its scale. None: the study does not "
            "rate texts.",
        ),
        "assessment_overlap": models.PositiveSmallIntegerField(
            default=1,
            validators=[MinValueValidator(1)],
            verbose_name="Ratings per text",
            help_text="Direct assessment: annotators who rate each text under each criterion.",
        ),
        "assessment_texts": models.CharField(
            max_length=10,
            choices=AssessedTexts.choices,
            default=AssessedTexts.BOTH,
            verbose_name="Texts rated",
            help_text="Direct assessment: the originals, the perturbed texts, or both "
            "(annotators are not told which a text is).",
        ),
    },
    progress=("assessment_overlap",),
    constraints=(
        models.CheckConstraint(
            condition=Q(assessment_overlap__gte=1), name="study_assessment_overlap_positive"
        ),
    ),
)


class Rated(Protocol):
    """A study as direct assessment reads it: its own settings join `Study` at start-up
    (`study_settings` above), where type checkers do not see them."""

    pk: int
    assessment_criteria: Any  # a many-to-many manager of `Criterion`
    assessment_overlap: int
    assessment_texts: str


def rated(study: Study) -> Rated:
    """`study` with its direct assessment settings typed (`Rated`)."""
    return cast(Rated, study)


class AssessmentUnit(models.Model):
    """One text x criterion of a study's plan, in a shuffled work order. A unit the study no
    longer asks for (a criterion or text dropped) is kept `active=False` once rated."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="assessment_units")
    item = models.ForeignKey(SourceItem, on_delete=models.CASCADE, related_name="+")
    perturbation = models.ForeignKey(
        Perturbation,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
        help_text="Empty: the item's original text is rated.",
    )
    criterion = models.ForeignKey(Criterion, on_delete=models.PROTECT, related_name="+")
    position = models.PositiveIntegerField(help_text="Work order (a seeded shuffle).")
    active = models.BooleanField(default=True)

    class Meta:
        ordering = ["study", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["study", "item", "criterion"],
                condition=Q(perturbation__isnull=True),
                name="assessment_unit_original",
            ),
            models.UniqueConstraint(
                fields=["study", "perturbation", "criterion"],
                condition=Q(perturbation__isnull=False),
                name="assessment_unit_perturbed",
            ),
        ]

    def __str__(self) -> str:
        text = f"p{self.perturbation_id}" if self.perturbation_id else f"i{self.item_id}"
        return f"{self.study_id}/{text}/{self.criterion_id}"


class AssessmentSlot(LeasedSlot):
    """One of the k ratings a text x criterion needs: open, leased to an annotator, or done."""

    unit = models.ForeignKey(AssessmentUnit, on_delete=models.CASCADE, related_name="slots")
    unit_field = "unit"
    Meta = slot_meta("assessment_slot", ("unit",))


class AssessmentSkip(Skip):
    unit = models.ForeignKey(AssessmentUnit, on_delete=models.CASCADE, related_name="+")
    unit_field = "unit"
    Meta = skip_meta("assessment_skip_once", "unit")


class Assessment(Judgement):
    """One annotator's rating of one text under one criterion, with the scale it was on."""

    unit = models.ForeignKey(AssessmentUnit, on_delete=models.CASCADE, related_name="assessments")
    score = models.SmallIntegerField()
    scale_min = models.SmallIntegerField()
    scale_max = models.SmallIntegerField()

    judgement_kind = change_field = "assessment"
    judgement_label = "Direct assessment"
    unit_fields = ("unit",)
    answer_fields = ("score",)
    value_field = "score"

    class Meta:
        ordering = ["study", "created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["unit", "annotator"], name="one_assessment_per_annotator"
            ),
            models.CheckConstraint(
                condition=Q(score__gte=F("scale_min"), score__lte=F("scale_max")),
                name="assessment_score_on_scale",
            ),
        ]
        indexes = [models.Index(fields=["study", "annotator", "created_at"])]

    def __str__(self) -> str:
        return f"{self.annotator_id} rated {self.unit_id}: {self.score}"
