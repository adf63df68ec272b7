"""The FBI sections of the judge reliability report (methods §3; FBI Tables 2-3): failure rates
per kind and per ability, for single-answer, reference-guided and pairwise judging, each with
its Wilson 95% interval and N (docs/analysis.md)."""

from __future__ import annotations

from collections import defaultdict

from apps.analysis.reports.base import Section, Table, rounded
from apps.analysis.reports.judge_data import KindInfo, Paired, RunScores, kind_infos
from apps.analysis.reports.judge_data import pairwise_verdicts as verdicts_of
from apps.analysis.stats import fbi
from apps.analysis.stats.intervals import Estimate
from apps.judging.models import JudgeRun

RATE_COLUMNS = ["rate", "ci_low", "ci_high", "n"]


def _figures(estimate: Estimate) -> list[object]:
    return [
        rounded(estimate.value),
        rounded(estimate.ci_low),
        rounded(estimate.ci_high),
        estimate.n,
    ]


def _kind_pairs(paired: Paired, kind_id: int) -> tuple[list[float], list[float]]:
    orig = [o for (k, _), (os_, _) in paired.items() if k == kind_id for o in os_]
    pert = [p for (k, _), (_, ps) in paired.items() if k == kind_id for p in ps]
    return orig, pert


def _measure(run: JudgeRun, kind: KindInfo, orig, pert) -> tuple[str, Estimate]:
    strategy = run.strategy
    if strategy is not None and strategy.family == "reference":
        rate = fbi.reference_guided_failure_estimate(pert, strategy.scale_max)
        return ("success: still max score" if kind.score_invariant else "failure: max score"), rate
    if kind.score_invariant:
        return "success: score equal", fbi.score_invariant_success_estimate(orig, pert)
    return "failure: not lower", fbi.single_answer_failure_estimate(orig, pert)


def failure_section(run: JudgeRun, data: RunScores, paired: Paired) -> Section:
    rows = []
    by_ability: dict[tuple[str, str], tuple[list[float], list[float], set[str]]] = defaultdict(
        lambda: ([], [], set())
    )
    for kind_id, kind in sorted(data.kinds.items(), key=lambda kv: kv[1].slug):
        orig, pert = _kind_pairs(paired, kind_id)
        if not orig:
            continue
        what, rate = _measure(run, kind, orig, pert)
        rows.append([kind.slug, kind.name, kind.ability, what, *_figures(rate)])
        if not kind.score_invariant:
            pooled = by_ability[(kind.ability or "-", what)]
            pooled[0].extend(orig)
            pooled[1].extend(pert)
            pooled[2].add(kind.slug)
    ability_rows = []
    for (ability, what), (orig, pert, kinds) in sorted(by_ability.items()):
        kind = KindInfo("", "", "", ability, False, None)
        ability_rows.append(
            [ability, what, *_figures(_measure(run, kind, orig, pert)[1]), len(kinds)]
        )
    return Section(
        "Failure rates (FBI)",
        "Single-answer scoring: the share of perturbed texts not scored lower than their "
        "original (a failure to detect); reference-guided: the share still given the maximum "
        "score; for score-invariant kinds, the share handled right (score kept). ci_low and "
        "ci_high: Wilson 95% interval; n: scored (text, criterion) pairs.",
        tables=[
            Table("failure_rates", ["kind", "name", "ability", "measure", *RATE_COLUMNS], rows),
            Table(
                "failure_by_ability",
                ["ability", "measure", *RATE_COLUMNS, "kinds"],
                ability_rows,
                "Per ability (FBI Table 3), pooling the kinds that should lower the score.",
            ),
        ],
    )


PAIRWISE_COLUMNS = [
    "not_original",
    "not_original_ci_low",
    "not_original_ci_high",
    "judgements",
    "detected_both",
    "detected_both_ci_low",
    "detected_both_ci_high",
    "pairs",
]


def _pairwise_figures(judgements) -> list[object]:
    not_original, detected = fbi.pairwise_estimates(judgements)
    return [*_figures(not_original), *_figures(detected)]


def pairwise_section(run: JudgeRun) -> Section:
    verdicts = verdicts_of(run)
    kinds = kind_infos(set(verdicts))
    rows, by_ability = [], defaultdict(list)
    for kind_id, judgements in sorted(verdicts.items(), key=lambda kv: kinds[kv[0]].slug):
        kind = kinds[kind_id]
        rows.append([kind.slug, kind.name, kind.ability, *_pairwise_figures(judgements)])
        if not kind.score_invariant:
            by_ability[kind.ability or "-"].extend(judgements)
    ability_rows = [
        [ability, *_pairwise_figures(judgements)]
        for ability, judgements in sorted(by_ability.items())
    ]
    return Section(
        "Pairwise (both orders)",
        "not_original: the share of judgements not choosing the original (the failure rate, "
        "over single judgements); detected_both: the share of pairs where the original was "
        "chosen in both orders. Each with its Wilson 95% interval.",
        tables=[
            Table("pairwise", ["kind", "name", "ability", *PAIRWISE_COLUMNS], rows),
            Table(
                "pairwise_by_ability",
                ["ability", *PAIRWISE_COLUMNS],
                ability_rows,
                "Per ability (FBI Table 3), score-invariant kinds left out.",
            ),
        ],
    )
