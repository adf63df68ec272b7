"""Adversarial searches (AdvEval, docs/methods.md §6) and everything they make.

A search (``AdversarialSearch``) has a generator, gold judges and one victim judge
(``SearchJudge``: each judge with its strategy and the judge run its calls are kept in), and
runs over the items of a dataset: per item and method (AdvEval, or the rule baseline) one
``SearchItem``; per item its iterations (``SearchIteration``: iteration 0 scores the initial
response R0, each later one is one generator call, kept like a judge call); per iteration
its ``Candidate`` texts with their scores.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from apps.catalog.models import Criterion
from apps.corpus.models import Dataset, Perturbation, SourceItem
from apps.endpoints.models import Endpoint
from apps.judging.models.call import ParseStatus
from apps.judging.models.judge import Judge
from apps.judging.models.run import JudgeRun, RunStatus
from apps.judging.models.strategy import Strategy


class Direction(models.TextChoices):
    R_PLUS = "R+", "R+: good texts the victim scores low"
    R_MINUS = "R-", "R-: poor texts the victim scores high"


class SearchQuerySet(models.QuerySet["AdversarialSearch"]):
    def for_user(self, user: Any) -> SearchQuerySet:
        """The searches this researcher started (superusers: all); nobody else's."""
        if not (user.is_authenticated and user.is_researcher):
            return self.none()
        return self if user.is_superuser else self.filter(created_by=user)


class AdversarialSearch(models.Model):
    """What to search for, with what, and within which limits; its live state.

    Stopping (per item): the best feedback score reaches ``target_score``, or
    ``max_iterations`` generator rounds are done, or the victim was asked ``query_budget``
    times (each victim call counts: a candidate costs the victim strategy's samples).
    """

    label = models.CharField(max_length=200, blank=True)
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="+")
    study = models.ForeignKey(
        "annotation.Study",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Its report appears in this study's reports.",
    )
    item_ids = models.JSONField(default=list, blank=True, help_text="Empty: every item.")
    criterion = models.ForeignKey(
        Criterion,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="What the judges score (LLM strategies that name a quality need one).",
    )
    criterion_in_prompt = models.BooleanField(
        default=True, help_text="Show the criterion to the generator (the paper does for R+)."
    )
    generator = models.ForeignKey(
        Endpoint,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The model endpoint that writes candidates.",
    )
    generator_temperature = models.FloatField(default=1.0)
    generator_max_tokens = models.PositiveIntegerField(
        default=1024, validators=[MinValueValidator(1)]
    )
    direction = models.CharField(max_length=2, choices=Direction.choices)
    alpha = models.FloatField(default=1.0)
    target_score = models.FloatField(default=60.0, help_text="Stop once S_fb reaches this.")
    max_iterations = models.PositiveSmallIntegerField(
        default=10, validators=[MinValueValidator(1), MaxValueValidator(1000)]
    )
    query_budget = models.PositiveIntegerField(
        default=300, validators=[MinValueValidator(1)], help_text="Victim calls per item."
    )
    candidates_per_iteration = models.PositiveSmallIntegerField(
        default=4, validators=[MinValueValidator(1), MaxValueValidator(50)]
    )
    tau1 = models.FloatField(null=True, blank=True, help_text="Empty: 70 for R+, 30 for R-.")
    tau2 = models.FloatField(default=40.0)
    rule_baseline = models.BooleanField(
        default=True,
        help_text="Also search with the rule-based perturbers under the same limits.",
    )

    status = models.CharField(max_length=10, choices=RunStatus.choices, default=RunStatus.PENDING)
    error = models.TextField(blank=True)
    claimed_by = models.CharField(max_length=200, blank=True, help_text="The worker on it.")
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    generator_calls = models.PositiveIntegerField(default=0)
    generator_cached = models.PositiveIntegerField(default=0)
    generator_http_requests = models.PositiveIntegerField(default=0)
    generator_prompt_tokens = models.PositiveBigIntegerField(default=0)
    generator_completion_tokens = models.PositiveBigIntegerField(default=0)

    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    objects = SearchQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(direction__in=["R+", "R-"]), name="search_direction"
            ),
        ]
        indexes = [models.Index(fields=["status", "heartbeat_at"])]

    def __str__(self) -> str:
        return self.label or f"search {self.pk} ({self.direction})"

    @property
    def finished(self) -> bool:
        return self.status in (RunStatus.DONE, RunStatus.FAILED, RunStatus.CANCELLED)

    @property
    def success_tau1(self) -> float:
        from apps.judging.adversarial.objective import DEFAULT_TAU1

        return DEFAULT_TAU1[self.direction] if self.tau1 is None else self.tau1


class Role(models.TextChoices):
    GOLD = "gold", "Gold"
    VICTIM = "victim", "Victim"


class SearchJudge(models.Model):
    """A gold or the victim judge of a search, and the judge run its calls are kept in."""

    search = models.ForeignKey(AdversarialSearch, on_delete=models.CASCADE, related_name="judges")
    role = models.CharField(max_length=6, choices=Role.choices)
    judge = models.ForeignKey(Judge, on_delete=models.PROTECT, related_name="+")
    strategy = models.ForeignKey(
        Strategy, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    run = models.OneToOneField(JudgeRun, on_delete=models.PROTECT, related_name="search_judge")

    class Meta:
        ordering = ["search", "-role", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["search"], condition=Q(role="victim"), name="one_victim_per_search"
            )
        ]

    def __str__(self) -> str:
        return f"{self.search_id} {self.role}: {self.judge}"

    @property
    def samples(self) -> int:
        return self.strategy.samples if self.strategy is not None else 1


class Method(models.TextChoices):
    ADVEVAL = "adveval", "AdvEval (LLM generator)"
    RULES = "rules", "Rule baseline"


class ItemStatus(models.TextChoices):
    RUNNING = "running", "Searching"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


class StopReason(models.TextChoices):
    TARGET = "target", "Reached the target score"
    ITERATIONS = "iterations", "Iteration limit"
    BUDGET = "budget", "Victim-query budget spent"
    EXHAUSTED = "exhausted", "No new candidate to try"


class SearchItem(models.Model):
    """One source item searched by one method; ``best`` is the text the search returns."""

    search = models.ForeignKey(AdversarialSearch, on_delete=models.CASCADE, related_name="items")
    item = models.ForeignKey(SourceItem, on_delete=models.CASCADE, related_name="+")
    method = models.CharField(max_length=8, choices=Method.choices, default=Method.ADVEVAL)
    status = models.CharField(max_length=8, choices=ItemStatus.choices, default=ItemStatus.RUNNING)
    stop_reason = models.CharField(max_length=10, choices=StopReason.choices, blank=True)
    error = models.TextField(blank=True)
    iterations = models.PositiveSmallIntegerField(default=0, help_text="Generator rounds done.")
    victim_queries = models.PositiveIntegerField(default=0)
    gold_queries = models.PositiveIntegerField(default=0)
    best = models.ForeignKey(
        "Candidate", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    success = models.BooleanField(null=True, blank=True)
    perturbation = models.ForeignKey(
        Perturbation,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The final text as a perturbation (AdvEval, when it differs from R0).",
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["search", "item_id", "method"]
        constraints = [
            models.UniqueConstraint(
                fields=["search", "item", "method"], name="one_search_item_per_method"
            )
        ]

    def __str__(self) -> str:
        return f"{self.search_id}/{self.item_id}/{self.method}"


class IterationStatus(models.TextChoices):
    PENDING = "pending", "Waiting for candidates"
    GENERATED = "generated", "Candidates being scored"
    SCORED = "scored", "Scored"
    FAILED = "failed", "Failed"


class SearchIteration(models.Model):
    """One iteration of one item. Number 0 scores R0; each later one is one generator call
    (AdvEval) or a draw of rule-based perturbations (the baseline).

    The generator call is kept like a judge call: the request, the raw reply (also when no
    candidate could be read from it, even after a format reminder (``format_retry``):
    ``parse_status`` unparsed, nothing scored), tokens,
    attempts, the server's request id; ``cached`` replies reuse ``cached_from``'s (same
    endpoint, model, parameters and prompt) and made no HTTP request.
    """

    search_item = models.ForeignKey(
        SearchItem, on_delete=models.CASCADE, related_name="iteration_set"
    )
    number = models.PositiveSmallIntegerField()
    status = models.CharField(
        max_length=10, choices=IterationStatus.choices, default=IterationStatus.PENDING
    )
    wanted = models.PositiveSmallIntegerField(default=0, help_text="Candidates asked for.")
    request = models.JSONField(default=dict, blank=True)
    raw_response = models.TextField(blank=True)
    format_retry = models.JSONField(
        null=True, blank=True, help_text="The second ask, with a format reminder, if made."
    )
    parse_status = models.CharField(max_length=10, choices=ParseStatus.choices, blank=True)
    parse_reason = models.TextField(blank=True)
    cache_key = models.CharField(max_length=64, blank=True)
    cached = models.BooleanField(default=False)
    cached_from = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    latency = models.FloatField(null=True, blank=True)
    request_id = models.CharField(max_length=200, blank=True)
    response_model = models.CharField(max_length=200, blank=True)
    finish_reason = models.CharField(max_length=40, blank=True)
    error_kind = models.CharField(max_length=20, blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["search_item", "number"]
        constraints = [
            models.UniqueConstraint(fields=["search_item", "number"], name="iteration_number")
        ]
        indexes = [models.Index(fields=["cache_key"])]

    def __str__(self) -> str:
        return f"{self.search_item} #{self.number} ({self.status})"


class CandidateOrigin(models.TextChoices):
    INITIAL = "initial", "Initial response R0"
    GENERATOR = "generator", "Generator"
    RULE = "rule", "Rule-based perturber"


class Candidate(models.Model):
    """A text tried by the search, with its scores on 0-100 once its calls are back.

    ``s_gold`` is the mean over gold judges of each one's mean over its samples; ``s_victim``
    the victim's mean over its samples, mapped onto 0-100. A candidate whose judge replies
    could not all be read stays unscored (``unscored`` says why) and never enters the
    trajectory. A candidate equal to one already tried is not scored again (``duplicate_of``).
    """

    iteration = models.ForeignKey(
        SearchIteration, on_delete=models.CASCADE, related_name="candidates"
    )
    search_item = models.ForeignKey(SearchItem, on_delete=models.CASCADE, related_name="candidates")
    index = models.PositiveSmallIntegerField()
    text = models.TextField()
    origin = models.CharField(max_length=10, choices=CandidateOrigin.choices)
    provenance = models.JSONField(default=dict, blank=True, help_text="Rule and parameters.")
    duplicate_of = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    s_gold = models.FloatField(null=True, blank=True)
    s_victim = models.FloatField(null=True, blank=True)
    s_fb = models.FloatField(null=True, blank=True)
    gold_by_judge = models.JSONField(default=dict, blank=True, help_text="judge id → mean.")
    unscored = models.TextField(blank=True)

    class Meta:
        ordering = ["search_item", "iteration__number", "index"]
        constraints = [
            models.UniqueConstraint(fields=["iteration", "index"], name="candidate_index"),
            models.CheckConstraint(
                condition=Q(s_fb__isnull=True)
                | (Q(s_gold__isnull=False) & Q(s_victim__isnull=False)),
                name="candidate_scores_together",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.search_item} #{self.iteration.number}.{self.index}"

    @property
    def scored(self) -> bool:
        return self.s_fb is not None
