"""Judge audits (docs/audit.md): one action that plans and runs the standard battery of judge
runs and a small adversarial search for one or more judges (each with a strategy) on a study
or a dataset, with one estimate, one progress view and cancel/resume for the whole battery.

An audit (``JudgeAudit``) has subjects (``AuditSubject``: a judge and the researcher's
single-score strategy), and each subject has parts (``AuditPart``: one kind of evidence, held
in an ordinary ``JudgeRun`` or ``AdversarialSearch``, or skipped with the reason why).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import Q

from apps.corpus.models import Dataset
from apps.endpoints.models import Endpoint
from apps.judging.models.judge import Judge
from apps.judging.models.run import JudgeRun
from apps.judging.models.search import AdversarialSearch
from apps.judging.models.strategy import Strategy

#: The counters ``JudgeAudit.progress`` sums.
PROGRESS_KEYS = ("total", "done", "failed", "cached", "unscored", "http_requests")


class AuditStatus(models.TextChoices):
    PENDING = "pending", "Planned, not started"
    RUNNING = "running", "Running"
    CANCELLED = "cancelled", "Cancelled"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


class AuditQuerySet(models.QuerySet["JudgeAudit"]):
    def for_user(self, user: Any) -> AuditQuerySet:
        """The audits this researcher made (superusers: all); nobody else's."""
        if not (user.is_authenticated and user.is_researcher):
            return self.none()
        return self if user.is_superuser else self.filter(owner=user)


class JudgeAudit(models.Model):
    """One battery over one study or one dataset, with its estimate before it starts.

    ``estimate`` (made when planned): ``calls`` planned judge calls, ``cached_calls`` of them
    already answered by the cache, ``http_calls`` the rest, ``prompt_tokens`` and
    ``completion_tokens`` expected for those, ``cost_usd`` (None when a judge has no prices),
    and ``notes`` saying how each figure was reached.
    """

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    study = models.ForeignKey(
        "annotation.Study", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    dataset = models.ForeignKey(
        Dataset, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    label = models.CharField(max_length=200, blank=True)
    status = models.CharField(
        max_length=10, choices=AuditStatus.choices, default=AuditStatus.PENDING
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    estimate = models.JSONField(default=dict, blank=True)
    search_budget = models.PositiveIntegerField(
        default=20, help_text="Victim queries per item for the small adversarial search."
    )
    generator = models.ForeignKey(
        Endpoint,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The adversarial search's generator (none: the search is skipped).",
    )
    gold_judge = models.ForeignKey(
        Judge,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The adversarial search's gold judge (an LLM judge; none: skipped).",
    )
    error = models.TextField(blank=True, help_text="Why the audit failed, if it did.")

    objects = AuditQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(study__isnull=False, dataset__isnull=True)
                | Q(study__isnull=True, dataset__isnull=False),
                name="audit_study_or_dataset",
            )
        ]

    def __str__(self) -> str:
        return self.label or f"audit {self.pk}"

    @property
    def finished(self) -> bool:
        return self.status in (AuditStatus.DONE, AuditStatus.FAILED, AuditStatus.CANCELLED)

    def parts_all(self) -> models.QuerySet[AuditPart]:
        return AuditPart.objects.filter(subject__audit=self).select_related(
            "subject", "run", "baseline", "search"
        )

    def progress(self) -> dict[str, int]:
        """Counters summed over its parts' runs and searches, each counted once (parts that
        ask the same thing share a run; a search counts the runs its judges' calls are kept
        in, and its generator's HTTP requests)."""
        totals = dict.fromkeys(PROGRESS_KEYS, 0)
        runs: dict[int, JudgeRun] = {}
        searches: dict[int, AdversarialSearch] = {}
        for part in self.parts_all():
            runs.update({r.pk: r for r in (part.run, part.baseline) if r is not None})
            if part.search is not None:
                searches[part.search.pk] = part.search
        for search in searches.values():
            totals["http_requests"] += search.generator_http_requests
            runs.update({sj.run.pk: sj.run for sj in search.judges.select_related("run")})
        for run in runs.values():
            for key in PROGRESS_KEYS:
                totals[key] += getattr(run, key)
        return totals


class AuditSubject(models.Model):
    """A judge and strategy under audit (metric judges have no strategy)."""

    audit = models.ForeignKey(JudgeAudit, on_delete=models.CASCADE, related_name="subjects")
    judge = models.ForeignKey(Judge, on_delete=models.PROTECT, related_name="+")
    strategy = models.ForeignKey(
        Strategy, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    label = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ["audit", "id"]

    def __str__(self) -> str:
        return self.label or f"{self.judge} · {self.strategy or 'metric'}"


class PartKind(models.TextChoices):
    FBI_SINGLE = "fbi_single", "FBI single answer"
    FBI_PAIRWISE = "fbi_pairwise", "FBI pairwise, both orders"
    FBI_REFERENCE = "fbi_reference", "FBI reference-guided"
    DISCERNMENT = "discernment", "DHP discernment"
    ASPECT_DELTAS = "aspect_deltas", "Aspect-targeted deltas (S_T, S_F)"
    MISLEADING_CUE = "misleading_cue", "Misleading cue"
    HUMAN_AGREEMENT = "human_agreement", "Agreement with human ratings"
    ADVERSARIAL = "adversarial", "Adversarial search"


class AuditPart(models.Model):
    """One kind of evidence for one subject: a judge run, a search, or skipped (why)."""

    subject = models.ForeignKey(AuditSubject, on_delete=models.CASCADE, related_name="parts")
    part = models.CharField(max_length=20, choices=PartKind.choices)
    run = models.ForeignKey(
        JudgeRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    search = models.ForeignKey(
        AdversarialSearch, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    baseline = models.ForeignKey(
        JudgeRun,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The run it is compared with: the misleading cue's knowledge-prompt run.",
    )
    skipped_reason = models.TextField(blank=True)

    class Meta:
        ordering = ["subject", "id"]
        constraints = [
            models.UniqueConstraint(fields=["subject", "part"], name="one_audit_part_per_kind")
        ]

    def __str__(self) -> str:
        return f"{self.subject}: {self.get_part_display()}"

    @property
    def skipped(self) -> bool:
        return bool(self.skipped_reason) or (self.run_id is None and self.search_id is None)

    def progress(self) -> dict[str, int]:
        counters = dict.fromkeys(PROGRESS_KEYS, 0)
        runs: list[JudgeRun] = []
        runs.extend(run for run in (self.run, self.baseline) if run is not None)
        if self.search is not None:
            runs.extend(sj.run for sj in self.search.judges.select_related("run"))
            counters["http_requests"] += self.search.generator_http_requests
        for run in runs:
            for key in PROGRESS_KEYS:
                counters[key] += getattr(run, key)
        return counters
