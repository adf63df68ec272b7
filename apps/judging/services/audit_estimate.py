"""An audit's estimate before it starts (docs/audit.md, "The estimate"): calls planned, those
the cache already answers, the HTTP requests left, their tokens and their cost.

Judge runs are planned, so their calls are known: each call's prompt and cache key are
computed as the worker will, and a key some earlier call already answered costs nothing (calls
of one key inside the battery are asked once). Prompt tokens: the prompt's characters / 4;
completion tokens: the judge's past average with that strategy, else the strategy's
``max_tokens`` (an upper bound). A search's course depends on the replies: its figures are
upper bounds from its limits, unless the same search already ran to the end (then it will
replay from the cache: its recorded calls, none over HTTP).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.db.models import Avg

from apps.endpoints.client import call_cache_key
from apps.judging.engine.loop import sampling_params
from apps.judging.models import (
    AdversarialSearch,
    AuditPart,
    JudgeAudit,
    JudgeCall,
    JudgeRun,
    ParseStatus,
    Role,
    RunStatus,
    SearchJudge,
)
from apps.judging.prompt_template import TemplateError
from apps.judging.prompting import PromptError, call_messages

CHARS_PER_TOKEN = 4
KEYS = ("calls", "cached_calls", "http_calls", "prompt_tokens", "completion_tokens")


def _answered(keys: set[str]) -> set[str]:
    """The cache keys some earlier call already answered (as the worker's cache looks)."""
    found: set[str] = set()
    ordered = sorted(keys)
    for start in range(0, len(ordered), 2000):
        chunk = ordered[start : start + 2000]
        found |= set(
            JudgeCall.objects.filter(
                cache_key__in=chunk,
                cached=False,
                parse_status__in=[ParseStatus.PARSED, ParseStatus.UNPARSED],
            ).values_list("cache_key", flat=True)
        )
    return found


def _completion_average(run: JudgeRun) -> tuple[int, str]:
    past = JudgeCall.objects.filter(
        run__judge=run.judge_id,
        run__strategy__slug=run.strategy.slug if run.strategy else None,
        cached=False,
        completion_tokens__isnull=False,
    ).aggregate(avg=Avg("completion_tokens"))["avg"]
    if past is not None:
        return round(past), "past average"
    assert run.strategy is not None
    return run.strategy.max_tokens, "max_tokens (upper bound)"


def run_estimate(run: JudgeRun, seen: set[str]) -> dict[str, Any]:
    """Calls of one planned run; ``seen``: cache keys already counted in this battery."""
    calls = JudgeCall.objects.filter(run=run).select_related(
        "item__task", "item__dataset__task", "perturbation", "criterion__aspect", "metric"
    )
    figures: dict[str, Any] = dict.fromkeys(KEYS, 0)
    if run.judge.is_metric or run.strategy is None or run.judge.endpoint is None:
        figures["calls"] = run.total
        return figures
    endpoint = run.judge.endpoint.config()
    chars: dict[str, int] = {}
    for call in calls.iterator(chunk_size=500):
        figures["calls"] += 1
        try:
            messages = call_messages(run.strategy, call)
        except (PromptError, TemplateError):
            continue  # fails before any request
        key = call_cache_key(endpoint, messages, sampling_params(run, call.sample_index))
        chars[key] = sum(len(m["content"]) for m in messages)
    answered = _answered(set(chars))
    new = [k for k in chars if k not in answered and k not in seen]
    seen |= set(chars)
    figures["cached_calls"] = figures["calls"] - len(new)
    figures["http_calls"] = len(new)
    figures["prompt_tokens"] = sum(chars[k] for k in new) // CHARS_PER_TOKEN
    per_call, source = _completion_average(run)
    figures["completion_tokens"] = per_call * len(new)
    figures["completion_source"] = source
    return figures


def _same_search_done(search: AdversarialSearch) -> AdversarialSearch | None:
    """An earlier search with the same inputs that ran to the end (it replays from cache)."""
    fields = [
        "dataset_id",
        "item_ids",
        "criterion_id",
        "criterion_in_prompt",
        "generator_id",
        "generator_temperature",
        "generator_max_tokens",
        "direction",
        "alpha",
        "target_score",
        "max_iterations",
        "query_budget",
        "candidates_per_iteration",
        "tau1",
        "tau2",
        "rule_baseline",
    ]
    same = AdversarialSearch.objects.filter(
        status=RunStatus.DONE, **{f: getattr(search, f) for f in fields}
    ).exclude(pk=search.pk)
    for judge in SearchJudge.objects.filter(search=search):
        same = same.filter(
            judges__role=judge.role,
            judges__judge=judge.judge_id,
            judges__strategy=judge.strategy_id,
        )
    return same.order_by("-id").first()


def search_estimate(search: AdversarialSearch) -> dict[str, Any]:
    judges = list(SearchJudge.objects.filter(search=search).select_related("strategy", "judge"))
    items = search.items.count()
    before = _same_search_done(search)
    figures: dict[str, Any] = dict.fromkeys(KEYS, 0)
    if before is not None:
        calls = JudgeCall.objects.filter(run__search_judge__search=before).count()
        figures["calls"] = figures["cached_calls"] = calls + before.generator_calls
        figures["search_source"] = f"replays search {before.pk} from the cache"
        return figures
    victim = next(j for j in judges if j.role == Role.VICTIM)
    candidates = min(
        search.query_budget // victim.samples,
        1 + search.max_iterations * search.candidates_per_iteration,
    )
    calls = items * candidates * victim.samples
    for gold in (j for j in judges if j.role == Role.GOLD):
        calls += items * candidates * gold.samples
    generator = items * search.max_iterations
    figures["calls"] = figures["http_calls"] = calls + generator
    figures["prompt_tokens"] = figures["http_calls"] * 500
    figures["completion_tokens"] = calls * 50 + generator * search.generator_max_tokens
    figures["search_source"] = "upper bound from the search's limits"
    return figures


def _cost(run: JudgeRun | None, figures: dict[str, Any]) -> Decimal | None:
    if run is None:
        return None
    return run.judge.cost(figures["prompt_tokens"], figures["completion_tokens"])


def audit_estimate(audit: JudgeAudit) -> dict[str, Any]:
    """The estimate stored on the audit (keys: docs/audit.md)."""
    totals: dict[str, Any] = dict.fromkeys(KEYS, 0)
    notes: list[str] = []
    parts_out: list[dict[str, Any]] = []
    cost, priced = Decimal(0), True
    seen: set[str] = set()
    done_runs: set[int] = set()
    parts = AuditPart.objects.filter(subject__audit=audit).select_related(
        "subject",
        "run__judge__endpoint",
        "run__strategy",
        "baseline__judge__endpoint",
        "baseline__strategy",
        "search",
    )
    for part in parts.order_by("subject_id", "id"):
        figures: dict[str, Any] = dict.fromkeys(KEYS, 0)
        held: list[tuple[JudgeRun | None, dict[str, Any]]] = []
        for run in (part.run, part.baseline):
            if run is not None and run.pk not in done_runs:
                done_runs.add(run.pk)
                held.append((run, run_estimate(run, seen)))
        if part.search is not None:
            held.append((None, search_estimate(part.search)))
            notes.append(f"{part.subject}: adversarial search, {held[-1][1]['search_source']}")
        for run, found in held:
            for key in KEYS:
                figures[key] += found[key]
            if found["http_calls"]:
                price = _cost(run, found)
                if price is None:
                    priced = False
                else:
                    cost += price
            if run is not None and run.judge.is_metric and found["calls"]:
                notes.append(f"{run.judge.name}: {found['calls']} calls computed here, no HTTP")
            if found.get("completion_source") == "max_tokens (upper bound)" and run:
                notes.append(f"{run.judge.name}: completion tokens at max_tokens (no past replies)")
        for key in KEYS:
            totals[key] += figures[key]
        parts_out.append({"subject": part.subject_id, "part": part.part, **figures})
    totals["cost_usd"] = float(round(cost, 6)) if priced else None
    if not priced:
        notes.append("cost unknown: a judge (or the search's generator) has no prices")
    notes.append(f"prompt tokens ≈ characters / {CHARS_PER_TOKEN}")
    totals["notes"] = sorted(set(notes), key=notes.index)
    totals["parts"] = parts_out
    return totals


__all__ = ["audit_estimate", "run_estimate", "search_estimate"]
