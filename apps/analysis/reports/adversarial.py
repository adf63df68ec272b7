"""Adversarial search (methods §6): attack success rates per victim, direction and dataset,
with the rule baseline beside AdvEval; the scores of the final texts; iterations and
queries used; the gold validation by annotators; examples with their diffs from R0.

Reads the study's searches (``AdversarialSearch.study``) in bulk; the statistics are those of
``apps.analysis.stats.adversarial``. An item counts once its search is done with it: its
final text is the best candidate; an item with no scored candidate is a failed attack.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from statistics import fmean, median

from django.db.models import Q

from apps.analysis.controls import excluded_people
from apps.analysis.reports.base import Report, Section, Table, rounded
from apps.analysis.reports.figures import boxplots
from apps.analysis.stats.adversarial import gold_validation, is_success
from apps.analysis.stats.intervals import Estimate, share_of
from apps.annotation.models import GoldCheck, Study
from apps.corpus.diff import compute_diff
from apps.judging.models import ItemStatus, SearchItem, SearchJudge

EXAMPLES_PER_GROUP = 3


def gold_labels(study: Study) -> list[tuple[int, int, bool]]:
    """The gold validation's labels, (perturbation, annotator, good): real answers only (not
    control items'), without annotators the study's control threshold leaves out."""
    excluded = excluded_people(study)
    rows = GoldCheck.objects.filter(study=study).exclude(annotator_id__in=excluded)
    return list(rows.values_list("perturbation_id", "annotator_id", "good"))


@dataclass(frozen=True)
class Final:
    """One item's outcome in one search."""

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

    @property
    def group(self) -> tuple[str, str, str]:
        return (self.victim, self.direction, self.dataset)


def finals(study: Study) -> list[Final]:
    """Every finished item of the study's searches (two queries)."""
    return search_finals(Q(search__study=study))


def search_finals(searches: Q) -> list[Final]:
    """Every finished item of the searches ``searches`` selects (a Q on SearchItem and
    SearchJudge, e.g. ``Q(search_id__in=[...])``), in two queries."""
    victims = dict(
        SearchJudge.objects.filter(searches, role="victim").values_list("search_id", "judge__name")
    )
    items = (
        SearchItem.objects.filter(searches, status=ItemStatus.DONE)
        .select_related("search", "search__dataset", "item", "best")
        .order_by("search_id", "item_id", "method")
    )
    return [_final(item, victims.get(item.search_id, "?")) for item in items]


def _final(item: SearchItem, victim: str) -> Final:
    search, best = item.search, item.best
    scored = best is not None and best.s_gold is not None and best.s_victim is not None
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
        text=best.text if best else None,
        s_gold=best.s_gold if scored else None,  # type: ignore[union-attr]
        s_victim=best.s_victim if scored else None,  # type: ignore[union-attr]
        success=bool(success),
        iterations=item.iterations,
        victim_queries=item.victim_queries,
        gold_queries=item.gold_queries,
        stop_reason=item.stop_reason,
        perturbation=item.perturbation_id,
    )


def _asr(rows: Iterable[Final]) -> Estimate:
    return share_of([row.success for row in rows])


def _estimate_cells(estimate: Estimate) -> list[object]:
    return [
        rounded(estimate.value),
        rounded(estimate.ci_low),
        rounded(estimate.ci_high),
        estimate.n,
    ]


def asr_section(rows: Sequence[Final]) -> Section:
    by_group: dict[tuple[str, str, str], dict[str, list[Final]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for row in rows:
        by_group[row.group][row.method].append(row)
    table_rows = [
        [
            *group,
            *_estimate_cells(_asr(methods["adveval"])),
            *_estimate_cells(_asr(methods["rules"])),
        ]
        for group, methods in sorted(by_group.items())
    ]
    table = Table(
        "attack_success",
        [
            "victim",
            "direction",
            "dataset",
            "adveval_asr",
            "adveval_ci_low",
            "adveval_ci_high",
            "adveval_n",
            "rules_asr",
            "rules_ci_low",
            "rules_ci_high",
            "rules_n",
        ],
        table_rows,
        "Attack success rate: the share of items whose final text is a successful attack (R+: "
        "S_gold > τ1 = 70 and S_gold - S_victim > τ2 = 40; R-: S_gold < 30 and S_victim - "
        "S_gold > 40, or the search's own thresholds), with its Wilson 95% interval and N "
        "items. The rule baseline searched with the product's rule-based perturbers under the "
        "same limits (iterations, victim-query budget).",
    )
    return Section("Attack success rate", tables=[table])


def _spread(values: Sequence[float]) -> list[object]:
    if not values:
        return [None, None, None, None, 0]
    return [rounded(fmean(values)), rounded(median(values)), min(values), max(values), len(values)]


def scores_section(rows: Sequence[Final]) -> Section:
    groups: dict[tuple[str, str, str], list[Final]] = defaultdict(list)
    for row in rows:
        if row.s_gold is not None:
            groups[(row.victim, row.direction, row.method)].append(row)
    table_rows = []
    gold_plot: dict[str, Sequence[float]] = {}
    victim_plot: dict[str, Sequence[float]] = {}
    for (victim, direction, method), members in sorted(groups.items()):
        gold = [m.s_gold for m in members if m.s_gold is not None]
        victim_scores = [m.s_victim for m in members if m.s_victim is not None]
        table_rows.append([victim, direction, method, *_spread(gold), *_spread(victim_scores)[:4]])
        label = f"{victim} {direction} {method}"
        gold_plot[label], victim_plot[label] = gold, victim_scores
    table = Table(
        "final_scores",
        [
            "victim",
            "direction",
            "method",
            "s_gold_mean",
            "s_gold_median",
            "s_gold_min",
            "s_gold_max",
            "n",
            "s_victim_mean",
            "s_victim_median",
            "s_victim_min",
            "s_victim_max",
        ],
        table_rows,
        "S_gold and S_victim (0-100) of the final texts, over the items with a scored one.",
    )
    figures = []
    if table_rows:
        figures = [
            boxplots(
                "final_s_gold",
                "S_gold of the final texts",
                gold_plot,
                caption="0-100; n: items with a scored final text.",
            ),
            boxplots(
                "final_s_victim",
                "S_victim of the final texts",
                victim_plot,
                caption="0-100; n: items with a scored final text.",
            ),
        ]
    return Section("Scores of the final texts", tables=[table], figures=figures)


def effort_section(rows: Sequence[Final]) -> Section:
    groups: dict[tuple[int, str, str, str], list[Final]] = defaultdict(list)
    for row in rows:
        groups[(row.search, row.victim, row.direction, row.method)].append(row)
    table_rows = []
    for (search, victim, direction, method), members in sorted(groups.items()):
        stops = Counter(m.stop_reason for m in members)
        table_rows.append(
            [
                search,
                victim,
                direction,
                method,
                len(members),
                rounded(fmean(m.iterations for m in members)),
                rounded(fmean(m.victim_queries for m in members)),
                rounded(fmean(m.gold_queries for m in members)),
                stops["target"],
                stops["iterations"],
                stops["budget"],
                stops["exhausted"],
            ]
        )
    table = Table(
        "iterations_and_queries",
        [
            "search",
            "victim",
            "direction",
            "method",
            "items",
            "iterations_mean",
            "victim_queries_mean",
            "gold_queries_mean",
            "stopped_at_target",
            "stopped_at_iteration_limit",
            "stopped_at_budget",
            "stopped_out_of_candidates",
        ],
        table_rows,
        "Per search and method: iterations (generator rounds or rule draws) and judge calls per "
        "item, and why the items stopped.",
    )
    return Section("Iterations and queries used", tables=[table])


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
        ["measure", "value", "ci_low", "ci_high", "n_texts", "n_annotators"],
        [
            ["accuracy of the gold label", *_estimate_cells(accuracy)[:3], accuracy.n, None],
            [
                "annotator agreement (Krippendorff's alpha, nominal)",
                rounded(agreement.value),
                rounded(agreement.ci_low),
                rounded(agreement.ci_high),
                agreement.n_units,
                agreement.n_raters,
            ],
        ],
        "Annotators label each adversarial text good or not good; the majority is compared "
        "with the gold label (good when S_gold ≥ 50): accuracy with its Wilson 95% interval "
        f"over the texts with a majority ({result.ties} tie(s) left out of {result.texts}); "
        "agreement with its bootstrap 95% interval.",
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
        if row.method == "adveval" and row.text is not None and row.text != row.original:
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
                    row.success,
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
        ],
        table_rows,
        f"Up to {EXAMPLES_PER_GROUP} final texts per victim, direction and dataset (successful "
        "ones first); in the diff, [-text-] was removed from R0 and {+text+} added.",
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
    report.sections += [
        asr_section(rows),
        scores_section(rows),
        effort_section(rows),
        validation_section(study, rows),
        examples_section(rows),
    ]
    return report
