"""Adversarial search reads: whose searches a user reaches, and what the live page shows.

A search belongs to the researcher who set it up (superusers see all); nobody else reaches
it, whatever its id (404). Its judge runs are theirs too (apps.judging.selectors).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from apps.judging.models import (
    AdversarialSearch,
    Candidate,
    JudgeRun,
    SearchItem,
    SearchJudge,
)


def searches_for_user(user: Any) -> QuerySet[AdversarialSearch]:
    return AdversarialSearch.objects.for_user(user).select_related(
        "dataset", "study", "generator", "criterion"
    )


def search_for_user(user: Any, pk: int) -> AdversarialSearch:
    """The search, or 404 if this user may not see it."""
    return get_object_or_404(searches_for_user(user), pk=pk)


@dataclass
class Costs:
    """Calls and cost so far: the generator's and each judge run's (cost: the judges' prices;
    an endpoint has none, so the generator's tokens are counted, not priced)."""

    runs: list[JudgeRun]
    generator_calls: int
    generator_cached: int
    http_requests: int
    tokens: int
    cost: Decimal | None


def search_costs(search: AdversarialSearch) -> Costs:
    judges = SearchJudge.objects.filter(search=search).select_related("run__judge")
    runs = []
    for judge in judges.order_by("-role", "id"):
        judge.run.search_role = judge.get_role_display()  # type: ignore[attr-defined]
        runs.append(judge.run)
    known = [cost for run in runs if (cost := run.estimated_cost) is not None]
    tokens = search.generator_prompt_tokens + search.generator_completion_tokens
    return Costs(
        runs=runs,
        generator_calls=search.generator_calls,
        generator_cached=search.generator_cached,
        http_requests=search.generator_http_requests + sum(r.http_requests for r in runs),
        tokens=tokens + sum(r.prompt_tokens + r.completion_tokens for r in runs),
        cost=sum(known, Decimal(0)) if known else None,
    )


def search_items(search: AdversarialSearch) -> list[SearchItem]:
    """Every item of the search with its best candidate (one query)."""
    return list(
        SearchItem.objects.filter(search=search)
        .select_related("item", "best")
        .order_by("item_id", "method")
    )


@dataclass
class Row:
    """One candidate on the trajectory page: its scores and the best S_fb up to it."""

    iteration: int
    candidate: Candidate
    best_so_far: float | None


@dataclass
class Trajectory:
    item: SearchItem | None
    rows: list[Row] = field(default_factory=list)


def search_trajectory(search: AdversarialSearch, item_id: Any = None) -> Trajectory:
    """The chosen search item's candidates in order (the first AdvEval item by default)."""
    items = SearchItem.objects.filter(search=search).select_related("item", "best")
    chosen = None
    if item_id not in (None, ""):
        try:
            chosen = items.filter(pk=int(item_id)).first()
        except (TypeError, ValueError):
            chosen = None
    chosen = chosen or items.order_by("method", "item_id").first()
    if chosen is None:
        return Trajectory(None)
    candidates = (
        Candidate.objects.filter(search_item=chosen)
        .select_related("iteration")
        .order_by("iteration__number", "index")
    )
    rows, best = [], None
    for candidate in candidates:
        if candidate.s_fb is not None:
            best = candidate.s_fb if best is None else max(best, candidate.s_fb)
        rows.append(Row(candidate.iteration.number, candidate, best))
    return Trajectory(chosen, rows)
