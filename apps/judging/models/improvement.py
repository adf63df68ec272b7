"""Improving a judge (docs/improve.md): from an audited subject's card, candidate strategies
for the same model are tried on a training half of the texts, the best is confirmed against
the current strategy on the held-out half, and the researcher may adopt it.

An ``Improvement`` holds the split (by source item: a text and its perturbations sit on one
side only), its estimate, its stage and its result; each ``ImprovementCandidate`` a strategy
with its training run and, when planned, its held-out run. Every run is an ordinary judge run: the
cache, the limits and the request counts are the runs'.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models

from apps.judging.models.audit import AuditSubject
from apps.judging.models.run import JudgeRun, RunStatus
from apps.judging.models.strategy import Strategy


class Stage(models.TextChoices):
    TRAIN = "train", "Trying the candidates on the training texts"
    CONFIRM = "confirm", "Confirming the best on the held-out texts"
    DONE = "done", "Done"


class Origin(models.TextChoices):
    CURRENT = "current", "The current strategy"
    SHIPPED = "shipped", "A shipped variant"
    FEW_SHOT = "few-shot", "Few-shot, from vetted perturbations it misses"
    YOURS = "yours", "Your own"


class ImprovementQuerySet(models.QuerySet["Improvement"]):
    def for_user(self, user: Any) -> ImprovementQuerySet:
        """The improvements this researcher made (superusers: all); nobody else's."""
        if not (user.is_authenticated and user.is_researcher):
            return self.none()
        return self if user.is_superuser else self.filter(owner=user)


class Improvement(models.Model):
    """A search for a better strategy of one audited judge, proven on texts it never saw."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    subject = models.ForeignKey(AuditSubject, on_delete=models.CASCADE, related_name="+")
    status = models.CharField(max_length=10, choices=RunStatus.choices, default=RunStatus.PENDING)
    stage = models.CharField(max_length=10, choices=Stage.choices, default=Stage.TRAIN)
    seed = models.PositiveIntegerField(default=0, help_text="Seeds the split of the texts.")
    train_items = models.JSONField(default=list, help_text="Source items tried on.")
    held_items = models.JSONField(default=list, help_text="Source items held out.")
    budget_requests = models.PositiveIntegerField(
        null=True, blank=True, help_text="Stop once this many HTTP requests are sent (empty: none)."
    )
    estimate = models.JSONField(default=dict, blank=True)
    result = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    adopted = models.ForeignKey(
        Strategy, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    advanced_at = models.DateTimeField(
        null=True, blank=True, help_text="Last look at its runs by a worker."
    )

    objects = ImprovementQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"improvement {self.pk} of {self.subject}"

    @property
    def finished(self) -> bool:
        return self.status in (RunStatus.DONE, RunStatus.FAILED, RunStatus.CANCELLED)

    def runs(self) -> list[JudgeRun]:
        """Every run of its candidates, training and held-out."""
        ids = [
            pk
            for pair in self.candidates.values_list("train_run_id", "held_run_id")
            for pk in pair
            if pk is not None
        ]
        return list(JudgeRun.objects.filter(pk__in=ids))

    def http_requests(self) -> int:
        return sum(run.http_requests for run in self.runs())


class ImprovementCandidate(models.Model):
    """One strategy tried: its training run and, for the current one and the best, its
    held-out run; ``train`` and ``held`` hold what was measured on each half."""

    improvement = models.ForeignKey(
        Improvement, on_delete=models.CASCADE, related_name="candidates"
    )
    strategy = models.ForeignKey(Strategy, on_delete=models.PROTECT, related_name="+")
    origin = models.CharField(max_length=10, choices=Origin.choices)
    label = models.CharField(max_length=300)
    train_run = models.ForeignKey(
        JudgeRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    held_run = models.ForeignKey(
        JudgeRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    train = models.JSONField(default=dict, blank=True)
    held = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["improvement", "id"]

    def __str__(self) -> str:
        return self.label

    @property
    def current(self) -> bool:
        return self.origin == Origin.CURRENT
