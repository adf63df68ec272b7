"""Adversarial search reads: whose searches a user reaches, and what the live page shows.

A search belongs to the researcher who set it up (superusers see all); nobody else reaches
it, whatever its id (404). Its judge runs are theirs too (apps.judging.selectors).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import astuple, dataclass, field
from decimal import Decimal
from typing import Any

from django.db.models import Count, Q, QuerySet
from django.shortcuts import get_object_or_404

from apps.judging.models import (
    AdversarialSearch,
    Candidate,
    CandidateOrigin,
    ItemStatus,
    JudgeRun,
    Method,
    ParseStatus,
    SearchItem,
    SearchIteration,
    SearchJudge,
    StopReason,
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


# -- what each item produced -----------------------------------------------------------------


@dataclass(frozen=True)
class Tally:
    """What the search of one item made (or of many, summed): its generator calls and their
    replies (an ask and its format retry are two calls), and the candidates beyond R0."""

    items: int = 0
    searching: int = 0  # items still being searched
    failed_items: int = 0  # items stopped by a generator call that failed
    with_result: int = 0  # items with a result (see ``Outcome``)
    calls: int = 0  # generator calls made, format retries and failed calls included
    retries: int = 0  # of them format retries
    failed_calls: int = 0  # of them with no usable reply (an error after the retries)
    unparsed: int = 0  # replies with no readable candidate
    candidates: int = 0  # texts proposed beyond R0 (by the generator or the rules)
    repeats: int = 0  # of them texts tried before (never judged again)
    unscored: int = 0  # of them judged, but a judge's reply could not be read
    scored: int = 0  # of them with S_gold, S_victim and S_fb

    @property
    def replies(self) -> int:
        """Generator calls that got a reply (a format retry counts as the call it is)."""
        return self.calls - self.failed_calls

    def __add__(self, other: Tally) -> Tally:
        return Tally(*(a + b for a, b in zip(astuple(self), astuple(other), strict=True)))


def tally_sum(tallies: Iterable[Tally]) -> Tally:
    return sum(tallies, Tally())


@dataclass(frozen=True)
class GeneratorReply:
    """One generator call that got a reply: its item, iteration and index (0 the ask, 1 its
    format retry), and whether it held no readable candidate."""

    search_item: int
    iteration: int
    index: int
    unparsed: bool


#: A search's generator calls: the replies, and the item of each call that failed.
Calls = tuple[list[GeneratorReply], list[int]]


def iteration_calls(parse_status: str, retry_ok: bool | None) -> list[bool | None]:
    """The calls of one generator iteration in order: True when the reply held no
    candidate, False when it held one, None when the call failed (no usable reply).
    ``retry_ok``: None when no format retry was made, else whether it got a reply."""
    if not parse_status:  # not asked yet
        return []
    if parse_status == ParseStatus.ERROR:
        return [None]
    parsed = parse_status == ParseStatus.PARSED
    if retry_ok is None:
        return [not parsed]
    return [True, (not parsed) if retry_ok else None]  # a retry is asked only when unparsed


def generator_replies(search_item_ids: Sequence[int]) -> Calls:
    """Every generator call of these items (AdvEval's iterations after R0): the replies, and
    the items of the calls that failed (one entry per failed call). One query."""
    rows = (
        SearchIteration.objects.filter(
            search_item_id__in=search_item_ids, search_item__method=Method.ADVEVAL, number__gt=0
        )
        .order_by("search_item_id", "number")
        .values_list("search_item_id", "number", "parse_status", "format_retry__ok")
    )
    replies, failed = [], []
    for item, number, status, retry_ok in rows:
        for index, unparsed in enumerate(iteration_calls(status, retry_ok)):
            if unparsed is None:
                failed.append(item)
            else:
                replies.append(GeneratorReply(item, number, index, unparsed))
    return replies, failed


def _candidate_counts(search_item_ids: Sequence[int]) -> dict[int, dict[str, int]]:
    """Per item, its candidates beyond R0: how many, tried before, unscored, scored."""
    beyond_r0 = Candidate.objects.filter(search_item_id__in=search_item_ids).exclude(
        origin=CandidateOrigin.INITIAL
    )
    rows = (
        beyond_r0.values("search_item_id")
        .annotate(
            n=Count("id"),
            n_repeats=Count("id", filter=Q(duplicate_of__isnull=False)),
            n_unscored=Count("id", filter=~Q(unscored="")),
            n_scored=Count("id", filter=Q(s_fb__isnull=False)),
        )
        .values_list("search_item_id", "n", "n_repeats", "n_unscored", "n_scored")
    )
    names = ("candidates", "repeats", "unscored", "scored")
    return {item: dict(zip(names, counts, strict=True)) for item, *counts in rows}


def has_result(item: SearchItem, scored: int) -> bool:
    """An item has a result once its search is done with it and at least one candidate
    beyond R0 was scored, or R0 itself reached the target (nothing left to search). An
    item whose every candidate went unread or unscored has none: it is not a failed attack."""
    return item.status == ItemStatus.DONE and (scored > 0 or item.stop_reason == StopReason.TARGET)


def item_tallies(items: Sequence[SearchItem], calls: Calls | None = None) -> dict[int, Tally]:
    """Each item's tally (two queries, whatever the number of items; one when ``calls``,
    their ``generator_replies``, are given)."""
    ids = [item.pk for item in items]
    replies, failed = calls if calls is not None else generator_replies(ids)
    by_item: dict[int, list[GeneratorReply]] = defaultdict(list)
    for reply in replies:
        by_item[reply.search_item].append(reply)
    counts, failures = _candidate_counts(ids), Counter(failed)
    out = {}
    for item in items:
        mine, made = by_item[item.pk], counts.get(item.pk, {})
        failed_calls = failures[item.pk]
        out[item.pk] = Tally(
            items=1,
            searching=int(item.status == ItemStatus.RUNNING),
            failed_items=int(item.status == ItemStatus.FAILED),
            with_result=int(has_result(item, made.get("scored", 0))),
            calls=len(mine) + failed_calls,
            retries=sum(reply.index == 1 for reply in mine),
            failed_calls=failed_calls,
            unparsed=sum(reply.unparsed for reply in mine),
            **made,
        )
    return out


def _of(part: int, whole: int, what: str) -> str:
    return f"{part} of {whole} {what}"


def no_result_reason(tally: Tally) -> str:
    """Why no candidate got scored, in words with the counts."""
    parts = []
    if tally.searching:
        parts.append(_of(tally.searching, tally.items, "items still being searched"))
    if tally.failed_calls:
        parts.append(f"{tally.failed_calls} generator call(s) failed")
    if tally.unparsed:
        said = _of(tally.unparsed, tally.replies, "generator replies held no candidate")
        if tally.retries:
            said += f" ({tally.replies - tally.retries} calls, {tally.retries} format retries)"
        parts.append(said)
    if tally.repeats:
        parts.append(_of(tally.repeats, tally.candidates, "candidates were texts tried before"))
    if tally.unscored:
        parts.append(
            _of(tally.unscored, tally.candidates, "candidates could not be scored")
            + " (a judge's reply was unreadable)"
        )
    return "; ".join(parts) or "no candidate was made"


@dataclass(frozen=True)
class ItemView:
    """A search item as its page shows it: the item and what its search produced."""

    item: SearchItem
    tally: Tally

    @property
    def pk(self) -> int:
        return self.item.pk

    @property
    def has_result(self) -> bool:
        return bool(self.tally.with_result)

    @property
    def no_result(self) -> str:
        """ "" with a result or while searching; else why there is none."""
        return "" if self.has_result or self.tally.searching else no_result_reason(self.tally)

    @property
    def success(self) -> bool | None:
        """Whether the final text is a successful attack; None without a result."""
        return self.item.success if self.has_result else None


def search_items(search: AdversarialSearch) -> list[ItemView]:
    """Every item of the search with its best candidate and its tally (three queries)."""
    items = list(
        SearchItem.objects.filter(search=search)
        .select_related("item", "best")
        .order_by("item_id", "method")
    )
    tallies = item_tallies(items)
    return [ItemView(item, tallies[item.pk]) for item in items]


@dataclass(frozen=True)
class MethodSummary:
    """The items of one method of a search: all of them summed (``tally``), and those its
    search finished with no result (``missing``), with why."""

    method: str
    label: str
    tally: Tally
    missing: Tally

    @property
    def no_result_reason(self) -> str:
        """ "" when every finished item has a result; else why the others have none."""
        return no_result_reason(self.missing) if self.missing.items else ""

    @property
    def sentence(self) -> str:
        """ "" when every finished item has a result; else how many have none, and why."""
        if not self.missing.items:
            return ""
        return (
            f"{self.label}: {self.missing.items} of {self.tally.items} items ended with no "
            f"result: {self.no_result_reason}."
        )


def method_summary(method: str, views: Sequence[ItemView]) -> MethodSummary:
    """The summary of one method's items (``views`` may hold other methods' too)."""
    mine = [view for view in views if view.item.method == method]
    missing = [view.tally for view in mine if view.no_result]
    return MethodSummary(
        method,
        str(Method(method).label),
        tally_sum(view.tally for view in mine),
        tally_sum(missing),
    )


def method_summaries(views: Sequence[ItemView]) -> list[MethodSummary]:
    """One summary per method the search used (AdvEval first)."""
    used = {view.item.method for view in views}
    return [method_summary(method.value, views) for method in Method if method.value in used]


# -- the trajectory ----------------------------------------------------------------------------


@dataclass
class Row:
    """One candidate on the trajectory page: its scores and the best S_fb up to it."""

    iteration: int
    candidate: Candidate
    best_so_far: float | None


@dataclass
class Step:
    """One iteration on the trajectory page: its candidates, or why it has none (with the
    generator's raw reply and its format retry, so the researcher reads what it said)."""

    iteration: SearchIteration
    rows: list[Row]

    @property
    def retry(self) -> dict[str, Any]:
        return self.iteration.format_retry or {}


@dataclass
class Trajectory:
    item: SearchItem | None
    rows: list[Row] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)


def _chosen_item(search: AdversarialSearch, item_id: Any) -> SearchItem | None:
    items = SearchItem.objects.filter(search=search).select_related("item", "best")
    chosen = None
    if item_id not in (None, ""):
        try:
            chosen = items.filter(pk=int(item_id)).first()
        except (TypeError, ValueError):
            chosen = None
    return chosen or items.order_by("method", "item_id").first()


def search_trajectory(search: AdversarialSearch, item_id: Any = None) -> Trajectory:
    """The chosen search item's iterations in order, each with its candidates (the first
    AdvEval item by default); an iteration with no candidate is listed too."""
    chosen = _chosen_item(search, item_id)
    if chosen is None:
        return Trajectory(None)
    iterations = list(SearchIteration.objects.filter(search_item=chosen).order_by("number"))
    numbers = {iteration.pk: iteration.number for iteration in iterations}
    # only those of the iterations read: a worker may add an iteration and its candidates
    # between the two reads (the page's next refresh shows them)
    candidates = Candidate.objects.filter(search_item=chosen, iteration_id__in=list(numbers))
    candidates = candidates.order_by("iteration__number", "index")
    by_iteration: dict[int, list[Row]] = defaultdict(list)
    rows, best = [], None
    for candidate in candidates:
        if candidate.s_fb is not None:
            best = candidate.s_fb if best is None else max(best, candidate.s_fb)
        rows.append(Row(numbers[candidate.iteration_id], candidate, best))
        by_iteration[candidate.iteration_id].append(rows[-1])
    steps = [Step(iteration, by_iteration[iteration.pk]) for iteration in iterations]
    return Trajectory(chosen, rows, steps)
