"""Adversarial search (methods §6): attack success rates per victim, direction and dataset,
with the rule baseline beside AdvEval; the scores of the final texts; iterations and
queries used; the gold validation by annotators; examples with their diffs from R0.

Reads the study's searches (``AdversarialSearch.study``) in bulk; the statistics are those of
``apps.analysis.stats.adversarial``. An item counts once its search is done with it (or failed):
its final text is the best candidate. An item whose search scored no candidate beyond R0 (every
generator reply without a candidate, every candidate unscored or tried before, the generator
call failed) has **no result**: it is counted apart with the reason, never as a failed attack;
a group with no result at all shows none, not a rate of 0. ``search_outcome`` gives the audit
card one search's counts (items with a result, generator calls and unreadable replies).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import median

from django.db.models import Q

from apps.analysis.controls import excluded_people
from apps.analysis.definitions import label
from apps.analysis.reports.base import Figure, Report, Section, Table, rounded
from apps.analysis.reports.figures import boxplots
from apps.analysis.stats.adversarial import (
    attack_success_over_results,
    gold_validation,
    is_success,
)
from apps.analysis.stats.intervals import Estimate, mean_interval
from apps.annotation.models import GoldCheck, Study
from apps.corpus.diff import compute_diff
from apps.judging.models import AdversarialSearch, ItemStatus, Method, SearchItem, SearchJudge
from apps.judging.search_selectors import (
    GeneratorReply,
    ItemView,
    Tally,
    generator_replies,
    item_tallies,
    method_summary,
    no_result_reason,
    tally_sum,
)

EXAMPLES_PER_GROUP = 3
FINISHED = (ItemStatus.DONE, ItemStatus.FAILED)


def method_name(method: str) -> str:
    """A method in words ("AdvEval (LLM generator)", "Rule baseline")."""
    return str(Method(method).label)


def yes_no(value: bool) -> str:
    return "yes" if value else "no"


def gold_labels(study: Study) -> list[tuple[int, int, bool]]:
    """The gold validation's labels, (perturbation, annotator, good): real answers only (not
    control items'), without annotators the study's control threshold leaves out."""
    excluded = excluded_people(study)
    rows = GoldCheck.objects.filter(study=study).exclude(annotator_id__in=excluded)
    return list(rows.values_list("perturbation_id", "annotator_id", "good"))


@dataclass(frozen=True)
class Final:
    """One item's outcome in one search. ``has_result``: at least one candidate beyond R0
    was scored (or R0 reached the target); without one, ``no_result`` says why and
    ``success`` is False but is no failed attack: leave the item out of any rate."""

    search: int
    victim: str
    direction: str
    dataset: str
    method: str
    external_id: str
    original: str
    text: str | None
    s_gold: float | None
    s_victim: float | None
    success: bool
    iterations: int
    victim_queries: int
    gold_queries: int
    stop_reason: str
    perturbation: int | None
    has_result: bool
    no_result: str
    tally: Tally

    @property
    def group(self) -> tuple[str, str, str]:
        return (self.victim, self.direction, self.dataset)

    @property
    def outcome(self) -> bool | None:
        """Whether the final text is a successful attack; None without a result."""
        return self.success if self.has_result else None


def finals(study: Study) -> list[Final]:
    """Every finished item of the study's searches (four queries)."""
    return search_finals(Q(search__study=study))


def search_finals(searches: Q) -> list[Final]:
    """Every finished item (done, or stopped by a failed generator call) of the searches
    ``searches`` selects (a Q on SearchItem and SearchJudge, e.g. ``Q(search_id__in=[...])``),
    in four queries."""
    victims = dict(
        SearchJudge.objects.filter(searches, role="victim").values_list("search_id", "judge__name")
    )
    items = list(
        SearchItem.objects.filter(searches, status__in=FINISHED)
        .select_related("search", "search__dataset", "item", "best")
        .order_by("search_id", "item_id", "method")
    )
    tallies = item_tallies(items)
    return [_final(item, victims.get(item.search_id, "?"), tallies[item.pk]) for item in items]


def _final(item: SearchItem, victim: str, tally: Tally) -> Final:
    search, best = item.search, item.best
    result = bool(tally.with_result)
    scored = result and best is not None and best.s_gold is not None and best.s_victim is not None
    success = scored and is_success(
        best.s_gold,  # type: ignore[union-attr,arg-type]
        best.s_victim,  # type: ignore[union-attr,arg-type]
        search.direction,
        search.success_tau1,
        search.tau2,
    )
    return Final(
        search=search.pk,
        victim=victim,
        direction=search.direction,
        dataset=search.dataset.name,
        method=item.method,
        external_id=item.item.external_id,
        original=item.item.original,
        text=best.text if best and result else None,
        s_gold=best.s_gold if scored else None,  # type: ignore[union-attr]
        s_victim=best.s_victim if scored else None,  # type: ignore[union-attr]
        success=bool(success),
        iterations=item.iterations,
        victim_queries=item.victim_queries,
        gold_queries=item.gold_queries,
        stop_reason=item.stop_reason,
        perturbation=item.perturbation_id,
        has_result=result,
        no_result="" if result else no_result_reason(tally),
        tally=tally,
    )


# -- the audit card's reads --------------------------------------------------------------------


@dataclass(frozen=True)
class SearchOutcome:
    """What one search's AdvEval items produced (counts read from the search, nothing
    re-derived): ``items`` searched, ``items_with_result`` (at least one candidate beyond R0
    scored, or R0 at the target), the generator's calls that got a reply (``generator_calls``:
    an ask and its format retry are two calls) and how many held no readable candidate
    (``generator_unparsed``), the calls that failed with no usable reply
    (``generator_failed``); ``no_result_reason`` is "" when at least one item has a result,
    else a sentence naming the counts; ``note`` is "" when every finished item has a result,
    else how many have none and why."""

    search: int
    items: int
    items_with_result: int
    generator_calls: int
    generator_unparsed: int
    generator_failed: int
    no_result_reason: str
    note: str
    replies: tuple[GeneratorReply, ...]

    @property
    def has_result(self) -> bool:
        return self.items_with_result > 0

    def generator_call_units(self) -> dict[tuple[str, int, int, int], float]:
        """One unit per generator call that got a reply: 1.0 when it held no candidate,
        0.0 when it held one; keyed ("generator", search item id, iteration, call index),
        the call index 0 for the ask and 1 for its format retry."""
        return {
            ("generator", reply.search_item, reply.iteration, reply.index): float(reply.unparsed)
            for reply in self.replies
        }


def search_outcome(search: AdversarialSearch) -> SearchOutcome:
    """The counts of ``search``'s AdvEval items (three queries)."""
    items = list(
        SearchItem.objects.filter(search=search, method=Method.ADVEVAL)
        .select_related("item")
        .order_by("id")
    )
    calls = generator_replies([item.pk for item in items])
    tallies = item_tallies(items, calls)
    views = [ItemView(item, tallies[item.pk]) for item in items]
    total = tally_sum(tallies.values())
    reason = ""
    if not total.with_result:
        reason = _nothing(total)
    return SearchOutcome(
        search=search.pk,
        items=total.items,
        items_with_result=total.with_result,
        generator_calls=total.replies,
        generator_unparsed=total.unparsed,
        generator_failed=total.failed_calls,
        no_result_reason=reason,
        note=method_summary(Method.ADVEVAL, views).sentence,
        replies=tuple(calls[0]),
    )


def _nothing(total: Tally) -> str:
    if not total.items:
        return "No result: the search has no AdvEval item."
    return (
        f"No result: none of the {total.items} items produced a scored candidate: "
        f"{no_result_reason(total)}."
    )


# -- the sections --------------------------------------------------------------------------


def _estimate_cells(estimate: Estimate | None) -> list[object]:
    if estimate is None:
        return [None, None, None, 0]
    return [
        rounded(estimate.value),
        rounded(estimate.ci_low),
        rounded(estimate.ci_high),
        estimate.n,
    ]


def _missing(rows: Sequence[Final]) -> str:
    """How many of these items have no result, and why ("" when all have one)."""
    missing = [row for row in rows if not row.has_result]
    if not missing:
        return ""
    reason = no_result_reason(tally_sum(row.tally for row in missing))
    if len(missing) == len(rows):
        return f"no result ({len(rows)} of {len(rows)} items): {reason}"
    return f"{len(missing)} of {len(rows)} items with no result, left out: {reason}"


def _asr_row(rows: Sequence[Final]) -> list[object]:
    """A method's cells: the rate over the items with a result with its interval and N, the
    items with none, and why they have none."""
    estimate = attack_success_over_results([row.outcome for row in rows])
    missing = sum(not row.has_result for row in rows)
    return [*_estimate_cells(estimate), missing, _missing(rows)]


def asr_section(rows: Sequence[Final]) -> Section:
    groups: dict[tuple[str, str, str, str], list[Final]] = defaultdict(list)
    for row in rows:
        groups[(*row.group, row.method)].append(row)
    table_rows = [
        [victim, direction, dataset, method_name(method), *_asr_row(members)]
        for (victim, direction, dataset, method), members in sorted(groups.items())
    ]
    table = Table(
        "attack_success",
        [
            "victim",
            "direction",
            "dataset",
            "method",
            "asr",
            "ci_low",
            "ci_high",
            "n_with_result",
            "items_no_result",
            "note",
        ],
        table_rows,
        "Attack success rate: the share of items whose final text is a successful attack (R+, "
        "a good text the victim scores low: S_gold > τ1 = 70 and S_gold − S_victim > τ2 = 40; "
        "R−, a poor text the victim scores high: S_gold < τ1 = 30 and S_victim − S_gold > τ2 "
        "= 40; or the search's own thresholds), with its Wilson 95% interval. N counts the "
        "items with a result (at least one candidate beyond R0 scored); items with no result "
        "(no candidate read from the generator's replies, every candidate unscored, a failed "
        "generator call) are counted apart with the reason, never as failed attacks, and a "
        "method with no result at all shows none. AdvEval's row is followed by the rule "
        "baseline's, which searched with the product's rule-based perturbers under the same "
        "limits (iterations, victim-query budget).",
    )
    return Section("Attack success rate", tables=[table])


def no_result_warnings(rows: Sequence[Final]) -> list[str]:
    """One warning per search and method whose items all ended with no result."""
    return [
        f"Search {search} ({victim}, {direction}), {method_name(method)}: its attack success "
        f"rate is unknown, not 0: {_missing(members)}."
        for (search, victim, direction, method), members in _by_search(rows)
        if not any(row.has_result for row in members)
    ]


def _mean_cells(values: Sequence[float]) -> list[object]:
    estimate = mean_interval(values)
    return [rounded(estimate.value), rounded(estimate.ci_low), rounded(estimate.ci_high)]


def scores_section(rows: Sequence[Final]) -> Section:
    groups: dict[tuple[str, str, str], list[Final]] = defaultdict(list)
    for row in rows:
        if row.has_result and row.s_gold is not None and row.s_victim is not None:
            groups[(row.victim, row.direction, row.method)].append(row)
    table_rows = []
    gold_plot: dict[str, Sequence[float]] = {}
    victim_plot: dict[str, Sequence[float]] = {}
    for (victim, direction, method), members in sorted(groups.items()):
        gold = [m.s_gold for m in members if m.s_gold is not None]
        victim_scores = [m.s_victim for m in members if m.s_victim is not None]
        table_rows.append(
            [
                victim,
                direction,
                method_name(method),
                len(members),
                *_mean_cells(gold),
                rounded(median(gold)),
                *_mean_cells(victim_scores),
                rounded(median(victim_scores)),
            ]
        )
        name = f"{victim} {direction} {'AdvEval' if method == Method.ADVEVAL else 'rules'}"
        gold_plot[name], victim_plot[name] = gold, victim_scores
    table = Table(
        "final_scores",
        [
            "victim",
            "direction",
            "method",
            "n_items",
            "s_gold_mean",
            "s_gold_ci_low",
            "s_gold_ci_high",
            "s_gold_median",
            "s_victim_mean",
            "s_victim_ci_low",
            "s_victim_ci_high",
            "s_victim_median",
        ],
        table_rows,
        "S_gold and S_victim (0-100) of the final texts: mean with its bootstrap 95% interval "
        "over the items, and median. N counts the items with a result; items with no result "
        "are left out (see the attack success rate).",
    )
    return Section(
        "Scores of the final texts", tables=[table], figures=_score_plots(gold_plot, victim_plot)
    )


def _score_plots(
    gold: dict[str, Sequence[float]], victim: dict[str, Sequence[float]]
) -> list[Figure]:
    if not gold:
        return []
    total = sum(len(values) for values in gold.values())
    counted = (
        f"one box per victim, direction and method (AdvEval or the rule baseline); n under "
        f"each box: its items with a result ({total} in all; items with no result left out)."
    )
    return [
        boxplots(
            "final_s_gold",
            "S_gold of the final texts",
            gold,
            caption=f"The gold judge's score (0-100) of each item's final text; {counted}",
            ylabel="S_gold",
        ),
        boxplots(
            "final_s_victim",
            "S_victim of the final texts",
            victim,
            caption=f"The victim's score (0-100) of each item's final text; {counted}",
            ylabel="S_victim",
        ),
    ]


def _by_search(rows: Sequence[Final]) -> list[tuple[tuple[int, str, str, str], list[Final]]]:
    groups: dict[tuple[int, str, str, str], list[Final]] = defaultdict(list)
    for row in rows:
        groups[(row.search, row.victim, row.direction, row.method)].append(row)
    return sorted(groups.items())


EFFORT = {
    "iterations_mean": lambda row: row.iterations,
    "victim_queries_mean": lambda row: row.victim_queries,
    "gold_queries_mean": lambda row: row.gold_queries,
}


def effort_section(rows: Sequence[Final]) -> Section:
    effort = []
    outcomes = []
    for (search, victim, direction, method), members in _by_search(rows):
        keys = [search, victim, direction, method_name(method)]
        for measure, of in EFFORT.items():
            mean = _mean_cells([of(m) for m in members])
            effort.append([*keys, label(measure), *mean, len(members)])
        outcomes.append([search, method_name(method), len(members), *_outcome_cells(members)])
    return Section(
        "Iterations and queries used",
        tables=[
            Table(
                "iterations_and_queries",
                [
                    "search",
                    "victim",
                    "direction",
                    "method",
                    "measure",
                    "mean",
                    "ci_low",
                    "ci_high",
                    "n_items",
                ],
                effort,
                "Per search and method: iterations after R0 (generator rounds, those whose "
                "replies held no candidate included, or rule draws) and judge calls per item, "
                "each a mean with its bootstrap 95% interval over the items. N counts the "
                "items the search finished, with a result or not.",
            ),
            Table(
                "item_outcomes",
                [
                    "search",
                    "method",
                    "n_items",
                    "items_with_result",
                    "stopped_at_target",
                    "stopped_at_iteration_limit",
                    "stopped_at_budget",
                    "stopped_out_of_candidates",
                    "items_failed",
                    "generator_replies",
                    "generator_unparsed",
                ],
                outcomes,
                "Per search and method: how many items have a result (at least one candidate "
                "beyond R0 scored; why the others have none is in the attack success rate's "
                "note), why the items stopped, and the generator's replies (an ask and its "
                "format retry count as two) with how many held no candidate. N counts the "
                "items the search finished.",
            ),
        ],
    )


def _outcome_cells(members: Sequence[Final]) -> list[object]:
    stops = Counter(m.stop_reason for m in members)
    tally = tally_sum(m.tally for m in members)
    return [
        tally.with_result,
        stops["target"],
        stops["iterations"],
        stops["budget"],
        stops["exhausted"],
        tally.failed_items,
        tally.replies,
        tally.unparsed,
    ]


def validation_section(study: Study, rows: Sequence[Final]) -> Section:
    gold = {r.perturbation: r.s_gold for r in rows if r.perturbation and r.s_gold is not None}
    labels = [label for label in gold_labels(study) if label[0] in gold]
    if not labels:
        return Section(
            "Gold validation",
            text="No annotator has labelled an adversarial text of this study yet: a search's "
            'final texts reach them as "Check adversarial texts" on the study page.',
        )
    result = gold_validation(labels, gold)  # type: ignore[arg-type]
    accuracy, agreement = result.accuracy, result.agreement
    table = Table(
        "gold_validation",
        ["measure", "value", "ci_low", "ci_high", "n_texts", "n_annotators", "ties"],
        [
            [
                label("gold_accuracy"),
                *_estimate_cells(accuracy)[:3],
                accuracy.n,
                None,
                result.ties,
            ],
            [
                label("gold_agreement"),
                rounded(agreement.value),
                rounded(agreement.ci_low),
                rounded(agreement.ci_high),
                agreement.n_units,
                agreement.n_raters,
                None,
            ],
        ],
        "Annotators label each adversarial text good or not good; the majority is compared "
        "with the gold label (good when S_gold ≥ 50): accuracy with its Wilson 95% interval, "
        f"N the texts with a majority ({result.ties} tie(s) left out of {result.texts}); "
        "agreement with its bootstrap 95% interval, N the texts with two labels or more.",
    )
    return Section("Gold validation", tables=[table])


def inline_diff(original: str, text: str) -> str:
    """The changes from R0 inline: [-removed-]{+added+}."""
    parts = []
    for op in compute_diff(original, text):
        if op["op"] == "equal":
            parts.append(op["a"])
            continue
        if op["a"]:
            parts.append(f"[-{op['a']}-]")
        if op["b"]:
            parts.append(f"{{+{op['b']}+}}")
    return "".join(parts)


def examples_section(rows: Sequence[Final]) -> Section:
    groups: dict[tuple[str, str, str], list[Final]] = defaultdict(list)
    for row in rows:
        changed = row.text is not None and row.text != row.original
        if row.method == Method.ADVEVAL and row.has_result and changed:
            groups[row.group].append(row)
    table_rows = []
    for group, members in sorted(groups.items()):
        chosen = sorted(members, key=lambda r: (not r.success, r.external_id))
        for row in chosen[:EXAMPLES_PER_GROUP]:
            table_rows.append(
                [
                    *group,
                    row.external_id,
                    row.original,
                    row.text,
                    inline_diff(row.original, row.text or ""),
                    rounded(row.s_gold, 1),
                    rounded(row.s_victim, 1),
                    yes_no(row.success),
                    len(members),
                ]
            )
    table = Table(
        "examples",
        [
            "victim",
            "direction",
            "dataset",
            "item",
            "r0",
            "final_text",
            "diff_from_r0",
            "s_gold",
            "s_victim",
            "success",
            "n_items",
        ],
        table_rows,
        f"Up to {EXAMPLES_PER_GROUP} AdvEval final texts per victim, direction and dataset "
        "(successful ones first), of the N items with a result whose final text differs from "
        "R0; in the diff, [-text-] was removed from R0 and {+text+} added.",
    )
    return Section("Examples", tables=[table])


def build(study: Study) -> Report:
    report = Report("adversarial-search", "Adversarial search", study.name)
    rows = finals(study)
    if not rows:
        report.notes.append(
            "No adversarial search of this study has finished an item yet (Judging → "
            "Adversarial searches, with this study chosen)."
        )
    report.warnings += no_result_warnings(rows)
    report.sections += [
        asr_section(rows),
        scores_section(rows),
        effort_section(rows),
        validation_section(study, rows),
        examples_section(rows),
    ]
    return report
