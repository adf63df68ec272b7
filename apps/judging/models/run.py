"""Judge runs: one judge + one strategy version over a selection of texts and criteria."""

from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.db import models
from django.db.models import Q, Sum

from apps.catalog.models import Criterion, Metric, PerturbationKind
from apps.corpus.models import Dataset
from apps.judging.models.judge import Judge
from apps.judging.models.strategy import Strategy


class RunStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    CANCELLED = "cancelled", "Cancelled"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


class JudgeRun(models.Model):
    """What to judge and how, with live progress counters.

    Selection: the items of ``dataset`` (or of the ``study``'s datasets), narrowed by
    ``item_ids``; their perturbations of ``kinds`` (empty: all kinds, or the study's),
    narrowed by ``perturbation_ids``; originals too when ``include_originals``. Each text is
    judged on every chosen criterion and task metric, ``strategy.samples`` times (pairwise:
    each perturbation against its original, in both orders if the strategy says so).

    Counters (kept in step with the calls, in the same transaction): ``done`` calls got a
    reply (``unscored`` of them could not be parsed, ``cached`` were served from the cache);
    ``failed`` calls got no usable reply. Tokens count only replies paid for (not cached).
    """

    judge = models.ForeignKey(Judge, on_delete=models.PROTECT, related_name="runs")
    strategy = models.ForeignKey(
        Strategy,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="runs",
        help_text="The pinned strategy version; none for metric judges.",
    )
    study = models.ForeignKey(
        "annotation.Study", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    dataset = models.ForeignKey(
        Dataset, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    label = models.CharField(max_length=200, blank=True)
    item_ids = models.JSONField(default=list, blank=True, help_text="Empty: every item.")
    perturbation_ids = models.JSONField(default=list, blank=True, help_text="Empty: all.")
    kinds = models.ManyToManyField(PerturbationKind, blank=True, related_name="+")
    criteria = models.ManyToManyField(Criterion, blank=True, related_name="+")
    metrics = models.ManyToManyField(Metric, blank=True, related_name="+")
    include_originals = models.BooleanField(default=True)
    include_perturbations = models.BooleanField(default=True)
    vetted_only = models.BooleanField(
        default=True,
        help_text="Only perturbations vetted valid or score-invariant in the study, or of a "
        "dataset validated by its publisher; off: every selected perturbation.",
    )
    batch_mode = models.BooleanField(
        default=False,
        help_text="Sent through the endpoint's batch interface: the batch price, answered "
        "within hours (apps.judging.batches).",
    )
    batch_live_fallback = models.BooleanField(
        default=False,
        help_text="Batch mode: calls a batch left unanswered (expired, failed) are asked on "
        "the live path, at the live price; off: they fail with the batch's reason.",
    )

    status = models.CharField(max_length=10, choices=RunStatus.choices, default=RunStatus.PENDING)
    planned = models.BooleanField(default=False, help_text="Its calls have been listed.")
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    cached = models.PositiveIntegerField(default=0)
    unscored = models.PositiveIntegerField(default=0)
    http_requests = models.PositiveIntegerField(default=0, help_text="HTTP attempts made.")
    prompt_tokens = models.PositiveBigIntegerField(default=0)
    completion_tokens = models.PositiveBigIntegerField(default=0)
    problems = models.JSONField(default=list, blank=True, help_text="What was left out, why.")
    error = models.TextField(blank=True, help_text="Why the run failed, if it did.")

    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="judge_runs"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(
        null=True, blank=True, help_text="Last sign of life of a worker on this run."
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(study__isnull=False) | Q(dataset__isnull=False),
                name="run_has_data",
            )
        ]
        indexes = [models.Index(fields=["status", "heartbeat_at"])]

    def __str__(self) -> str:
        return self.label or f"run {self.pk}: {self.judge} / {self.strategy or 'metric'}"

    @property
    def finished(self) -> bool:
        return self.status in (RunStatus.DONE, RunStatus.FAILED, RunStatus.CANCELLED)

    @property
    def completed(self) -> int:
        return self.done + self.failed

    @property
    def percent(self) -> int:
        return int(100 * self.completed / self.total) if self.total else 0

    @property
    def scored(self) -> int:
        return self.done - self.unscored

    @property
    def estimated_cost(self) -> Decimal | None:
        """Its tokens at the judge's prices (its batch price for tokens a batch answered)."""
        if not self.batch_mode:
            return self.judge.cost(self.prompt_tokens, self.completion_tokens)
        live_prompt = live_completion = 0
        if self.batch_live_fallback:  # calls a batch left unanswered were asked live
            live = self.calls.filter(cached=False, finished_at__isnull=False).exclude(
                request__has_key="batch"
            )
            sums = live.aggregate(p=Sum("prompt_tokens"), c=Sum("completion_tokens"))
            live_prompt, live_completion = sums["p"] or 0, sums["c"] or 0
        batch = self.judge.batch_cost(
            self.prompt_tokens - live_prompt, self.completion_tokens - live_completion
        )
        live_cost = self.judge.cost(live_prompt, live_completion)
        return None if batch is None or live_cost is None else batch + live_cost


class RunRequests(models.Model):
    """The HTTP attempts one worker task (its lease token) sent for a run, as last saved with
    its results; the run's ``http_requests`` grows by the same amounts, in the same
    transaction. A worker killed before it saved its last attempts left their count in Redis
    under its token: the restarted worker adds what is missing here (``engine.once``)."""

    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="+")
    token = models.CharField(max_length=255)
    sent = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "token"], name="run_requests_per_token")
        ]

    def __str__(self) -> str:
        return f"{self.token}: {self.sent}"
