"""Judges and strategy versions: checks, creation, and a new version for every edit."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Max

from apps.endpoints.models import Endpoint
from apps.endpoints.services import endpoint_problems, endpoint_save, endpoint_settings_apply
from apps.judging import selectors
from apps.judging.models import Judge, JudgeKind, Strategy
from apps.judging.parsers import NUMERIC_TOKEN_PARSERS, PATTERN_PARSERS, grade_pattern_problem
from apps.judging.prompt_template import template_problems
from apps.judging.services.shares import judge_endpoint_shares, judge_offer

STRATEGY_FIELDS = (
    "name",
    "family",
    "technique",
    "description",
    "source",
    "system_prompt",
    "prompt_template",
    "scale_min",
    "scale_max",
    "parser",
    "samples",
    "temperature",
    "max_tokens",
    "both_orders",
    "use_logprobs",
    "top_logprobs",
    "grade_pattern",
    "format_retry",
    "format_reminder",
    "examples",
)


# -- judges ------------------------------------------------------------------------------------


def judge_problems(judge: Judge) -> dict[str, str]:
    problems = {}
    if "/" in judge.name:
        problems["name"] = "a name without '/': owner/name is how a colleague's judge is named"
    if judge.kind == JudgeKind.METRIC and not judge.metric:
        problems["metric"] = "a metric judge needs its metric"
    if judge.kind == JudgeKind.LLM and judge.metric:
        problems["metric"] = "only metric judges have a metric"
    return problems


@transaction.atomic
def judge_save(
    *,
    judge: Judge,
    user: Any = None,
    shared_with: Iterable[Any] | None = None,
    endpoint: Mapping[str, Any] | None = None,
) -> Judge:
    """Create or update a judge after checking it (keys are never stored, only their name).

    ``user`` None is the shipped data's loader: such judges have no owner. Otherwise only the
    owner changes a judge, and a name must not repeat one of the judges the user can use.
    ``shared_with``: the researchers it is offered to (each uses it, read-only, once they
    accept: ``services.shares``; None: unchanged).
    ``endpoint``: an LLM judge's endpoint settings (``ENDPOINT_SETTINGS``: base URL, model, key
    variable, limits...; None: unchanged). The judge's endpoint is made with it, named, owned
    and shared like it, and changed with it; a metric judge has none.
    """
    if user is not None:
        _check_owner(judge, user)
    problems = judge_problems(judge)
    if (
        user is not None
        and selectors.judges_for_user(user).filter(name=judge.name).exclude(pk=judge.pk).exists()
    ):
        problems["name"] = "you already have (or can use) a judge with this name"
    if judge.pk is None and user is not None and user.is_authenticated:
        judge.created_by = user
    model_endpoint = _endpoint_of(judge, endpoint or {})
    if model_endpoint is not None:
        problems = endpoint_problems(model_endpoint) | problems
    if problems:
        raise ValidationError(problems)
    if model_endpoint is not None:
        judge.endpoint = endpoint_save(
            endpoint=model_endpoint, owner=judge.created_by, name=judge.name
        )
    else:
        judge.endpoint = None
    judge.full_clean()
    judge.save()
    if shared_with is not None:
        judge_offer(judge=judge, recipients=shared_with)
    else:
        judge_endpoint_shares(judge)
    return judge


def _endpoint_of(judge: Judge, settings: Mapping[str, Any]) -> Endpoint | None:
    """An LLM judge's endpoint with ``settings`` applied (unsaved): its own, else one of its
    owner's of the same name that no judge uses, else a new one; None for a metric judge."""
    if judge.kind != JudgeKind.LLM:
        return None
    endpoint = judge.endpoint if judge.endpoint_id else None
    if endpoint is None:
        endpoint = Endpoint.objects.filter(
            owner=judge.created_by, name=judge.name, judges=None
        ).first() or Endpoint(owner=judge.created_by, name=judge.name)
    endpoint_settings_apply(endpoint, settings)
    return endpoint


def _check_owner(judge: Judge, user: Any) -> None:
    if judge.pk is not None and not selectors.judges_owned_by(user).filter(pk=judge.pk).exists():
        raise PermissionDenied("Only the judge's owner may change it.")


# -- strategies --------------------------------------------------------------------------------


def strategy_problems(strategy: Strategy) -> dict[str, str]:
    problems: dict[str, str] = {}
    template = template_problems(strategy.prompt_template, pairwise=strategy.pairwise)
    system = template_problems(strategy.system_prompt + "{{text_a}}{{text_b}}", pairwise=True)
    if template:
        problems["prompt_template"] = "; ".join(template)
    if [p for p in system if "unknown" in p]:
        problems["system_prompt"] = "; ".join(p for p in system if "unknown" in p)
    if (strategy.family == "pairwise") != strategy.pairwise:
        problems["parser"] = "pairwise strategies (and only they) use the pairwise parser"
    if strategy.both_orders and not strategy.pairwise:
        problems["both_orders"] = "only pairwise strategies have orders"
    if strategy.use_logprobs and strategy.parser not in NUMERIC_TOKEN_PARSERS:
        problems["use_logprobs"] = "probability-weighted scores need a score token to weigh"
    if strategy.grade_pattern:
        if strategy.parser not in PATTERN_PARSERS:
            problems["grade_pattern"] = "only letter grades (grade_letter) are read by a pattern"
        elif problem := grade_pattern_problem(strategy.grade_pattern):
            problems["grade_pattern"] = problem
    if strategy.scale_min >= strategy.scale_max:
        problems["scale_max"] = "the scale needs min < max"
    if not isinstance(strategy.examples, list):
        problems["examples"] = "a JSON list"
    return problems


def _strategy_checked(strategy: Strategy) -> Strategy:
    problems = strategy_problems(strategy)
    if problems:
        raise ValidationError(problems)
    strategy.full_clean(validate_unique=False)
    strategy.save()
    return strategy


@transaction.atomic
def strategy_create(*, slug: str, user: Any = None, **fields: Any) -> Strategy:
    if Strategy.objects.filter(slug=slug).exists():
        raise ValidationError({"slug": "a strategy with this slug exists: revise it instead"})
    strategy = Strategy(slug=slug, version=1, **fields)
    strategy.created_by = user if user is not None and user.is_authenticated else None
    return _strategy_checked(strategy)


@transaction.atomic
def strategy_revise(
    *, strategy: Strategy, user: Any = None, note: str = "", **changes: Any
) -> Strategy:
    """A new version with ``changes``; the old one stays as it was (runs may pin it).

    Only the strategy's owner revises it (``user`` None: the shipped data's loader).
    """
    if user is not None and not selectors.strategies_owned_by(user).filter(pk=strategy.pk):
        raise PermissionDenied("Only the strategy's owner may revise it; save a copy instead.")
    unknown = set(changes) - set(STRATEGY_FIELDS)
    if unknown:
        raise ValidationError({"__all__": f"not strategy fields: {', '.join(sorted(unknown))}"})
    newest = Strategy.objects.filter(slug=strategy.slug).aggregate(v=Max("version"))["v"] or 0
    fields = {name: getattr(strategy, name) for name in STRATEGY_FIELDS} | changes
    revised = Strategy(slug=strategy.slug, version=newest + 1, note=note, **fields)
    revised.created_by = user if user is not None and user.is_authenticated else None
    return _strategy_checked(revised)
