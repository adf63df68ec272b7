"""Judges: an LLM behind a model endpoint, or a classic metric."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import Q

from apps.endpoints.models import Endpoint


class JudgeKind(models.TextChoices):
    LLM = "llm", "LLM (OpenAI-compatible endpoint)"
    METRIC = "metric", "Classic metric"


class MetricName(models.TextChoices):
    BLEU = "bleu", "BLEU"
    CHRF = "chrf", "chrF"
    ROUGE_L = "rougeL", "ROUGE-L"


class JudgeQuerySet(models.QuerySet["Judge"]):
    def for_user(self, user: Any) -> JudgeQuerySet:
        """Judges this researcher may see and use: their own, those shared with them, and the
        shipped ones (no owner). Nobody else's; annotators and experts none."""
        if not (user.is_authenticated and user.is_researcher):
            return self.none()
        if user.is_superuser:
            return self
        shared = Judge.shared_with.through.objects.filter(user=user).values("judge_id")
        return self.filter(Q(created_by=user) | Q(created_by=None) | Q(pk__in=shared))


class Judge(models.Model):
    """An evaluator: an LLM judge calls the model of its ``endpoint`` (base URL, model, key
    variable, parameters and limits: apps.endpoints), a metric judge computes ``metric``.

    A judge belongs to the researcher who made it (``created_by``), who alone may change it and
    may share it, read-only, with other researchers (``shared_with``, e.g. a study's owner);
    the shipped metric judges have no owner and are read-only for everyone.
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
    price_per_1k_prompt_tokens = models.DecimalField(
        max_digits=12, decimal_places=6, null=True, blank=True
    )
    price_per_1k_completion_tokens = models.DecimalField(
        max_digits=12, decimal_places=6, null=True, blank=True
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    shared_with = models.ManyToManyField(
        settings.AUTH_USER_MODEL,
        blank=True,
        related_name="+",
        help_text="Researchers who may use this judge (its key included), not change it.",
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
        if self.price_per_1k_prompt_tokens is None and self.price_per_1k_completion_tokens is None:
            return None
        prompt = (self.price_per_1k_prompt_tokens or Decimal(0)) * prompt_tokens
        completion = (self.price_per_1k_completion_tokens or Decimal(0)) * completion_tokens
        return (prompt + completion) / 1000
