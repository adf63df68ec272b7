"""Judges: an LLM behind an OpenAI-compatible endpoint, or a classic metric."""

from __future__ import annotations

from decimal import Decimal
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.db import models
from django.db.models import Q

from apps.judging.key_names import key_name_problem
from apps.judging.llm_client import EndpointConfig
from apps.judging.retry import RetryPolicy


def validate_key_variable(name: str) -> None:
    """Only allowed key variables (apps.judging.key_names): never the workers' own secrets."""
    if problem := key_name_problem(name):
        raise ValidationError(problem)


def validate_http_url(url: str) -> None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValidationError("an http:// or https:// address, e.g. https://api.openai.com/v1")


#: Keys a judge's default_params may hold; a strategy's own settings win over them.
DEFAULT_PARAM_KEYS = frozenset({"temperature", "top_p", "seed", "stop"})


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
    """An evaluator. The API key is never stored: `api_key_env` names the variable holding it.

    A judge belongs to the researcher who made it (``created_by``), who alone may change it and
    may share it, read-only, with other researchers (``shared_with``, e.g. a study's owner);
    the shipped metric judges have no owner and are read-only for everyone.
    """

    name = models.CharField(max_length=100)
    kind = models.CharField(max_length=8, choices=JudgeKind.choices, default=JudgeKind.LLM)
    base_url = models.CharField(
        max_length=300,
        blank=True,
        validators=[validate_http_url],
        help_text="e.g. https://api.openai.com/v1",
    )
    api_key_env = models.CharField(
        max_length=100,
        blank=True,
        validators=[validate_key_variable],
        help_text="The NAME of the environment variable holding the key: DISCERN_KEY_... "
        "(empty: no key).",
    )
    model = models.CharField(max_length=200, blank=True)
    default_params = models.JSONField(
        default=dict, blank=True, help_text="temperature, top_p, seed, stop (strategies win)."
    )
    max_concurrency = models.PositiveSmallIntegerField(
        default=8, validators=[MinValueValidator(1)], help_text="Calls in flight, all workers."
    )
    requests_per_minute = models.PositiveIntegerField(null=True, blank=True)
    timeout_s = models.FloatField(default=60.0, validators=[MinValueValidator(0.1)])
    max_attempts = models.PositiveSmallIntegerField(
        default=5, validators=[MinValueValidator(1)], help_text="HTTP attempts per call, in all."
    )
    max_tokens_param = models.CharField(
        max_length=24,
        default="max_tokens",
        choices=[("max_tokens", "max_tokens"), ("max_completion_tokens", "max_completion_tokens")],
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
                condition=Q(kind="metric", metric__in=["bleu", "chrf", "rougeL"])
                | (Q(kind="llm", metric="") & ~Q(base_url="") & ~Q(model="")),
                name="judge_kind_fields",
            ),
            models.CheckConstraint(condition=Q(max_concurrency__gte=1), name="judge_concurrency"),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def is_metric(self) -> bool:
        return self.kind == JudgeKind.METRIC

    @property
    def limit_key(self) -> str:
        """The name its concurrency and rate limits are shared under, across workers."""
        return f"judge-{self.pk}"

    def endpoint(self) -> EndpointConfig:
        return EndpointConfig(
            base_url=self.base_url,
            model=self.model,
            api_key_env=self.api_key_env,
            name=self.limit_key,
            timeout_s=self.timeout_s,
            max_concurrency=self.max_concurrency,
            requests_per_minute=self.requests_per_minute,
            max_tokens_param=self.max_tokens_param,  # type: ignore[arg-type]
            retry=RetryPolicy(max_attempts=self.max_attempts),
        )

    def cost(self, prompt_tokens: int, completion_tokens: int) -> Decimal | None:
        """Estimated price of these tokens, or None when the judge has no prices."""
        if self.price_per_1k_prompt_tokens is None and self.price_per_1k_completion_tokens is None:
            return None
        prompt = (self.price_per_1k_prompt_tokens or Decimal(0)) * prompt_tokens
        completion = (self.price_per_1k_completion_tokens or Decimal(0)) * completion_tokens
        return (prompt + completion) / 1000
