"""Judges: an LLM behind a model endpoint, or a classic metric."""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core.validators import MaxValueValidator
from django.db import models
from django.db.models import Q

from apps.endpoints.models import Endpoint

if TYPE_CHECKING:
    from apps.judging.models.strategy import Strategy


#: What the batch interfaces of OpenAI and Anthropic cost, in per cent of the live price.
BATCH_PRICE_PERCENT = 50


class JudgeKind(models.TextChoices):
    LLM = "llm", "LLM (OpenAI-compatible endpoint)"
    METRIC = "metric", "Classic metric"


class MetricName(models.TextChoices):
    BLEU = "bleu", "BLEU"
    CHRF = "chrf", "chrF"
    ROUGE_L = "rougeL", "ROUGE-L"


class JudgeQuerySet(models.QuerySet["Judge"]):
    def for_user(self, user: Any) -> JudgeQuerySet:
        """Judges this researcher may see and use: their own, those shared with them that they
        accepted, and the shipped ones (no owner). Nobody else's (an offer not yet accepted
        included); annotators and experts none."""
        if not (user.is_authenticated and user.is_researcher):
            return self.none()
        if user.is_superuser:
            return self
        shared = JudgeShare.objects.accepted().filter(user=user).values("judge_id")
        return self.filter(Q(created_by=user) | Q(created_by=None) | Q(pk__in=shared))


class Judge(models.Model):
    """An evaluator: an LLM judge calls the model of its ``endpoint`` (base URL, model, key
    variable, parameters and limits: apps.endpoints), a metric judge computes ``metric``.

    A judge belongs to the researcher who made it (``created_by``), who alone may change it and
    may share it, read-only, with other researchers (``shared_with``, e.g. a study's owner):
    each share is an offer (``JudgeShare``) until its recipient accepts it; the shipped metric
    judges have no owner and are read-only for everyone.
    """

    name = models.CharField(max_length=100)
    kind = models.CharField(max_length=8, choices=JudgeKind.choices, default=JudgeKind.LLM)
    endpoint = models.ForeignKey(
        Endpoint,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="judges",
        help_text="LLM judges: the model endpoint they call (made with the judge).",
    )
    metric = models.CharField(max_length=8, choices=MetricName.choices, blank=True)
    price_per_million_prompt_tokens = models.DecimalField(
        max_digits=16,
        decimal_places=6,
        null=True,
        blank=True,
        help_text="As providers list it: the price of a million prompt (input) tokens.",
    )
    price_per_million_completion_tokens = models.DecimalField(
        max_digits=16,
        decimal_places=6,
        null=True,
        blank=True,
        help_text="The price of a million completion (output) tokens.",
    )
    batch_price_percent = models.PositiveSmallIntegerField(
        default=BATCH_PRICE_PERCENT,
        validators=[MaxValueValidator(100)],
        help_text="The price of calls sent through the batch interface, in per cent of the "
        "prices above (OpenAI and Anthropic: 50).",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    shared_with = models.ManyToManyField(
        settings.AUTH_USER_MODEL,
        through="JudgeShare",
        blank=True,
        related_name="+",
        help_text="Researchers offered this judge: once they accept, they may use it (its key "
        "included), not change it.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = JudgeQuerySet.as_manager()

    class Meta:
        ordering = ["kind", "name"]
        constraints = [
            models.UniqueConstraint(fields=["created_by", "name"], name="judge_name_per_owner"),
            models.UniqueConstraint(
                fields=["name"], condition=Q(created_by=None), name="judge_name_shipped"
            ),
            models.CheckConstraint(
                condition=Q(kind="metric", metric__in=["bleu", "chrf", "rougeL"], endpoint=None)
                | Q(kind="llm", metric="", endpoint__isnull=False),
                name="judge_kind_fields",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def is_metric(self) -> bool:
        return self.kind == JudgeKind.METRIC

    @property
    def max_concurrency(self) -> int:
        """Calls in flight at once: its endpoint's limit (a metric judge's calls need none)."""
        return self.endpoint.max_concurrency if self.endpoint is not None else 1

    def cost(self, prompt_tokens: int, completion_tokens: int) -> Decimal | None:
        """Estimated price of these tokens, or None when the judge has no prices."""
        if (
            self.price_per_million_prompt_tokens is None
            and self.price_per_million_completion_tokens is None
        ):
            return None
        prompt = (self.price_per_million_prompt_tokens or Decimal(0)) * prompt_tokens
        completion = (self.price_per_million_completion_tokens or Decimal(0)) * completion_tokens
        return (prompt + completion) / 1_000_000

    def batch_problem(self, strategy: Strategy | None = None) -> str:
        """Why its calls (with this strategy) cannot go through a batch ("" when they can)."""
        if self.endpoint is None:
            return "a metric judge calls no model"
        if not self.endpoint.batch_api:
            return "its endpoint has no batch interface (tick it on the judge's form)"
        if strategy is not None and strategy.format_retry:
            return "its strategy asks again with a format reminder, which a batch cannot"
        return ""

    def batch_cost(self, prompt_tokens: int, completion_tokens: int) -> Decimal | None:
        """The same tokens sent through the batch interface (``batch_price_percent``)."""
        live = self.cost(prompt_tokens, completion_tokens)
        return None if live is None else live * self.batch_price_percent / 100


class JudgeShareQuerySet(models.QuerySet["JudgeShare"]):
    def accepted(self) -> JudgeShareQuerySet:
        return self.filter(accepted_at__isnull=False)

    def offered(self) -> JudgeShareQuerySet:
        """Offers their recipient has not accepted yet."""
        return self.filter(accepted_at=None)


class JudgeShare(models.Model):
    """A judge shared with a researcher: an offer until they accept it (``accepted_at``); only
    then do they see and use the judge and its endpoint. Declining deletes it.

    The table is the one the plain many-to-many ``Judge.shared_with`` had (migration 0012).
    """

    id = models.AutoField(primary_key=True)
    judge = models.ForeignKey(Judge, on_delete=models.CASCADE, related_name="shares")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    offered_at = models.DateTimeField(auto_now_add=True)
    accepted_at = models.DateTimeField(null=True, blank=True)

    objects = JudgeShareQuerySet.as_manager()

    class Meta:
        db_table = "judging_judge_shared_with"
        unique_together = [("judge", "user")]  # the many-to-many table's own constraint
        ordering = ["offered_at", "id"]

    def __str__(self) -> str:
        return f"{self.judge} shared with {self.user}"

    @property
    def host(self) -> str:
        """The host the judge's calls go to (its endpoint's base URL); "" for a metric judge."""
        endpoint = self.judge.endpoint
        return (urlsplit(endpoint.base_url).hostname or "") if endpoint is not None else ""

    @property
    def endpoint_model(self) -> str:
        """The model the judge calls; "" for a metric judge."""
        endpoint = self.judge.endpoint
        return endpoint.model if endpoint is not None else ""

    @property
    def state(self) -> str:
        return "accepted" if self.accepted_at is not None else "offered"
