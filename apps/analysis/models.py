"""Existing human ratings imported from published datasets (per annotator Likert scores)."""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models
from django.db.models import Q

from apps.catalog.models import Aspect, Metric
from apps.corpus.models import Perturbation, SourceItem


class HumanRating(models.Model):
    """One annotator's score of one text (an item's original, or a perturbation) on one
    criterion, as released with a dataset. `criterion_name` keeps the file's own label; it is
    resolved to an aspect of the tree or a metric of the item's task when one matches."""

    item = models.ForeignKey(SourceItem, on_delete=models.CASCADE, related_name="human_ratings")
    perturbation = models.ForeignKey(
        Perturbation, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    criterion_name = models.CharField(max_length=100)
    aspect = models.ForeignKey(Aspect, null=True, blank=True, on_delete=models.PROTECT)
    metric = models.ForeignKey(Metric, null=True, blank=True, on_delete=models.PROTECT)
    rater = models.CharField(max_length=100, help_text="The annotator's id in the source data.")
    score = models.FloatField()
    scale_min = models.FloatField()
    scale_max = models.FloatField()
    source = models.CharField(max_length=200, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["item", "criterion_name", "rater"],
                condition=Q(perturbation__isnull=True),
                name="one_rating_per_original",
            ),
            models.UniqueConstraint(
                fields=["perturbation", "criterion_name", "rater"],
                condition=Q(perturbation__isnull=False),
                name="one_rating_per_perturbation",
            ),
        ]
        indexes = [models.Index(fields=["item", "criterion_name"])]

    def __str__(self) -> str:
        return f"{self.rater} rated {self.item_id} {self.criterion_name}={self.score}"


class ReportSnapshot(models.Model):
    """A built report, kept until its inputs change (then its fingerprint no longer matches)."""

    class Status(models.TextChoices):
        BUILDING = "building", "Building"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    study = models.ForeignKey("annotation.Study", on_delete=models.CASCADE, related_name="+")
    name = models.CharField(max_length=40)
    run = models.ForeignKey(
        "judging.JudgeRun", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    fingerprint = models.CharField(max_length=64)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.BUILDING)
    payload = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    seconds = models.FloatField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["study", "name"], condition=Q(run__isnull=True), name="one_study_report"
            ),
            models.UniqueConstraint(
                fields=["study", "name", "run"],
                condition=Q(run__isnull=False),
                name="one_run_report",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} of study {self.study_id} ({self.status})"


class AuditReport(models.Model):
    """A built report card (``subject`` set) or side-by-side comparison (``subject`` null)
    of a judge audit, kept until its inputs change (docs/cards.md)."""

    audit = models.ForeignKey("judging.JudgeAudit", on_delete=models.CASCADE, related_name="+")
    subject = models.ForeignKey(
        "judging.AuditSubject", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    fingerprint = models.CharField(max_length=64)
    payload = models.JSONField(default=dict, blank=True)
    seconds = models.FloatField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["audit"], condition=Q(subject__isnull=True), name="one_audit_comparison"
            ),
            models.UniqueConstraint(
                fields=["audit", "subject"],
                condition=Q(subject__isnull=False),
                name="one_audit_card",
            ),
        ]

    def __str__(self) -> str:
        return f"{'card' if self.subject_id else 'comparison'} of audit {self.audit_id}"


def share_token() -> str:
    return secrets.token_urlsafe(32)


class CardShare(models.Model):
    """A read-only link to an audit's report cards and comparison, made by its owner. Whoever
    opens it must log in; a revoked link opens nothing (docs/cards.md)."""

    audit = models.ForeignKey("judging.JudgeAudit", on_delete=models.CASCADE, related_name="+")
    token = models.CharField(max_length=64, unique=True, default=share_token)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"share of audit {self.audit_id}{' (revoked)' if self.revoked_at else ''}"


class VerdictThreshold(models.Model):
    """A study's own threshold for one figure's verdict on its audits' report cards; a
    figure without one uses its definition's default (apps/analysis/definitions)."""

    study = models.ForeignKey("annotation.Study", on_delete=models.CASCADE, related_name="+")
    figure = models.CharField(max_length=40, help_text="The figure's key in the definitions.")
    value = models.FloatField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["study", "figure"], name="one_threshold_per_figure")
        ]

    def __str__(self) -> str:
        return f"{self.study}: {self.figure} {self.value:g}"
