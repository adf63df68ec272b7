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
from apps.endpoints.models import Endpoint
from apps.judging.engine.params import sampling_params
from apps.judging.models import (
    AdversarialSearch,
    AuditPart,
    Judge,
    JudgeAudit,
    JudgeCall,
    JudgeRun,
    Method,
    ParseStatus,
    PartKind,
    Role,
    RunStatus,
    SearchJudge,
)
from apps.judging.planning import UNVETTED
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


#: A search's prompts are not known before it runs: each call is counted at this many tokens.
SEARCH_PROMPT_TOKENS = 500


def _role(
    role: str, who: Judge | Endpoint, calls: int, cached: int = 0, http: int = 0, **tokens: int
) -> dict[str, Any]:
    """One role's figures (a metric victim's calls are computed here: neither cached nor
    HTTP; a generator's HTTP requests may exceed its calls: its format retries)."""
    endpoint = who if isinstance(who, Endpoint) else who.endpoint
    return {
        "role": role,
        "name": who.name,
        "model": endpoint.model if endpoint is not None else "",
        "calls": calls,
        "cached_calls": cached,
        "http_calls": http,
        "prompt_tokens": tokens.get("prompt", 0),
        "completion_tokens": tokens.get("completion", 0),
    }


def _generator_judge(search: AdversarialSearch) -> Judge | None:
    """The LLM judge whose endpoint is the search's generator, if it has prices (endpoints
    have none: the generator is priced by its judge's)."""
    judges = Judge.objects.filter(endpoint=search.generator_id)
    return judges.exclude(
        price_per_million_prompt_tokens=None, price_per_million_completion_tokens=None
    ).first()


def _priced(roles: list[dict[str, Any]], judges: list[Judge | None]) -> None:
    """Each role's cost from its judge's prices (None: no prices; nothing sent costs 0)."""
    for role, judge in zip(roles, judges, strict=True):
        cost = judge.cost(role["prompt_tokens"], role["completion_tokens"]) if judge else None
        role["cost"] = Decimal(0) if not role["http_calls"] else cost


def _replay_roles(
    search: AdversarialSearch, before: AdversarialSearch, judges: list[SearchJudge]
) -> list[dict[str, Any]]:
    roles = []
    for judge in judges:
        calls = JudgeCall.objects.filter(
            run__search_judge__search=before,
            run__search_judge__role=judge.role,
            run__search_judge__judge=judge.judge_id,
        ).count()
        roles.append(_role(judge.role, judge.judge, calls, cached=calls))
    calls = before.generator_calls
    roles.append(_role("generator", search.generator, calls, cached=calls))
    return roles


def _bound_roles(search: AdversarialSearch, judges: list[SearchJudge]) -> list[dict[str, Any]]:
    """Upper bounds from the search's limits: every item (and method) judges at most its R0
    and ``candidates_per_iteration`` texts an iteration, within the victim-query budget; the
    generator is asked once an iteration for each AdvEval item, and asked again once, with a
    format reminder, when its reply held no candidate."""
    victim = next(j for j in judges if j.role == Role.VICTIM)
    items = search.items.count()
    candidates = min(
        search.query_budget // victim.samples,
        1 + search.max_iterations * search.candidates_per_iteration,
    )
    roles = []
    for judge in judges:
        calls = items * candidates * judge.samples
        http = 0 if judge.judge.is_metric else calls
        reply = _completion_average(judge.run)[0] if http else 0
        tokens = {"prompt": http * SEARCH_PROMPT_TOKENS, "completion": http * reply}
        roles.append(_role(judge.role, judge.judge, calls, http=http, **tokens))
    asks = search.items.filter(method=Method.ADVEVAL).count() * search.max_iterations
    http = 2 * asks
    tokens = {
        "prompt": http * SEARCH_PROMPT_TOKENS,
        "completion": http * search.generator_max_tokens,
    }
    roles.append(_role("generator", search.generator, asks, http=http, **tokens))
    return roles


def search_estimate(search: AdversarialSearch) -> dict[str, Any]:
    """A search's figures (``KEYS``), ``search_source`` (how they were reached), and ``roles``:
    the same per judge and for the generator, each with its ``cost`` (None: no prices)."""
    judges = list(
        SearchJudge.objects.filter(search=search)
        .select_related("strategy", "judge__endpoint", "run__judge", "run__strategy")
        .order_by("-role", "id")
    )
    before = _same_search_done(search)
    if before is not None:
        roles = _replay_roles(search, before, judges)
        source = f"replays search {before.pk} from the cache"
    else:
        roles = _bound_roles(search, judges)
        source = "upper bound from the search's limits"
    _priced(roles, [*(j.judge for j in judges), _generator_judge(search)])
    figures: dict[str, Any] = {key: sum(r[key] for r in roles) for key in KEYS}
    figures["search_source"] = source
    figures["roles"] = roles
    return figures


def _cost(run: JudgeRun | None, figures: dict[str, Any], batch: bool = False) -> Decimal | None:
    """The run's estimated tokens at its judge's prices; ``batch``: at its batch price when
    its calls can go through the batch interface."""
    if run is None:
        return None
    tokens = figures["prompt_tokens"], figures["completion_tokens"]
    if batch and not run.judge.batch_problem(run.strategy):
        return run.judge.batch_cost(*tokens)
    return run.judge.cost(*tokens)


def audit_estimate(audit: JudgeAudit) -> dict[str, Any]:
    """The estimate stored on the audit (keys: docs/audit.md)."""
    totals: dict[str, Any] = dict.fromkeys(KEYS, 0)
    notes: list[str] = []
    parts_out: list[dict[str, Any]] = []
    cost, batch_cost, priced, batched = Decimal(0), Decimal(0), True, 0
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
                price, batch_price = _cost(run, found), _cost(run, found, batch=True)
                if price is None or batch_price is None:
                    priced = False
                else:
                    cost, batch_cost = cost + price, batch_cost + batch_price
                batched += run is not None and not run.judge.batch_problem(run.strategy)
            if run is not None and run.judge.is_metric and found["calls"]:
                notes.append(f"{run.judge.name}: {found['calls']} calls computed here, no HTTP")
            if found.get("completion_source") == "max_tokens (upper bound)" and run:
                notes.append(f"{run.judge.name}: completion tokens at max_tokens (no past replies)")
        for key in KEYS:
            totals[key] += figures[key]
        parts_out.append({"subject": part.subject_id, "part": part.part, **figures})
    totals["cost_usd"] = float(round(cost, 6)) if priced else None
    totals["batch_runs"] = batched
    totals["cost_batch_usd"] = float(round(batch_cost, 6)) if priced and batched else None
    if batched:
        notes.append(
            f"as a batch: {batched} run(s) through their judges' batch interface, at the "
            "batch price, answered within 24 h; the rest (and any adversarial search) live"
        )
    if not priced:
        notes.append("cost unknown: a judge (or the search's generator) has no prices")
    notes.append(f"prompt tokens ≈ characters / {CHARS_PER_TOKEN}")
    totals["notes"] = sorted(set(notes), key=notes.index)
    totals["parts"] = parts_out
    totals["nothing"] = measures_nothing(audit, parts)
    return totals


def measures_nothing(audit: JudgeAudit, parts: Any) -> str:
    """Why the battery would measure nothing ("" when it measures something): every
    perturbation of the study is left out as not vetted, so its runs would judge the originals
    alone, and neither a search nor the agreement with human ratings reads them."""
    runs = {r.pk: r for part in parts for r in (part.run, part.baseline) if r is not None}
    reads_originals = (
        p.search_id or (p.part == PartKind.HUMAN_AGREEMENT and p.run_id) for p in parts
    )
    if not runs or any(reads_originals):
        return ""
    if JudgeCall.objects.filter(run__in=runs, perturbation__isnull=False).exists():
        return ""
    unvetted = max(
        (p["count"] for r in runs.values() for p in r.problems or [] if p["reason"] == UNVETTED),
        default=0,
    )
    if not unvetted:
        return ""
    return (
        f"every perturbation is left out ({unvetted} not vetted in the study): the battery "
        "would judge the originals alone, which tells none of the card's figures"
    )


__all__ = ["audit_estimate", "measures_nothing", "run_estimate", "search_estimate"]
