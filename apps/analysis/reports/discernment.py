"""The discernment section of the judge reliability report (methods §4, DHP; docs/analysis.md).

Per kind: one Wilcoxon p per metric, combined by default with Wilson's harmonic mean p-value
and its asymptotically exact (Landau) p-value; the paper's ``1/sum(1/p)`` is shown beside it,
labelled "as published". D_min, D_avg, D^EW_min and D^EW_avg (DHP Fig. 4) leave out the
score-invariant kinds: a good judge leaves those unchanged, so their D is rightly near 0 and
would make D_min say nothing about the judge.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from apps.analysis.reports.base import Section, Table, rounded, significant
from apps.analysis.reports.expert_weights import weights_by_kind
from apps.analysis.reports.judge_data import Dim, KindInfo, Paired, RunScores
from apps.analysis.stats.discernment import (
    Level,
    combined_p,
    combined_p_weighted,
    d_avg,
    d_min,
    discernment,
    hmp_pvalue,
    wilcoxon_p,
)

LEVELS = ("C", "W", "S")
Combine = Callable[[Sequence[float], Sequence[float]], float]
DEFAULT: Combine = hmp_pvalue
PUBLISHED: Combine = combined_p_weighted

CAPTION = (
    "p: the kind's combined p-value, by default Wilson's harmonic mean p-value made exact "
    "with its Landau tail (a calibrated p: D >= 1 happens 5% of the time for a judge blind to "
    "the kind). D = log_0.05(p); D_EW: the same with the experts' weights. The paper's own "
    "combination is in the last table. n: the kind's perturbed texts whose original was "
    "scored too (the most over its metrics); M: metrics combined (those with a p-value). "
    "Score-invariant kinds are listed with their D, which a good judge keeps near 0; D_min "
    "and D_avg below leave them out."
)
LEVEL_NAMES = {"C": "character", "W": "word", "S": "sentence", "": "none"}


@dataclass
class KindResult:
    kind: KindInfo
    n: int
    p: dict[Dim, float]
    weights: Mapping[str, float] | None

    def usable(self) -> list[float]:
        return [v for v in self.p.values() if not math.isnan(v)]

    def p_combined(self, published: bool) -> float:
        usable = self.usable()
        if not usable:
            return math.nan
        return combined_p(usable) if published else hmp_pvalue(usable)

    def d(self, published: bool) -> float:
        return _d(self.p_combined(published))

    def d_ew(self, labels: Mapping[Dim, str], published: bool) -> float:
        """D^EW; undefined without votes or when a voted-for metric was not scored."""
        if not self.weights:
            return math.nan
        by_slug = {labels[d]: v for d, v in self.p.items() if d[0] == "m"}
        voted = {slug: w for slug, w in self.weights.items() if w > 0}
        if not set(voted) <= set(by_slug):
            return math.nan
        combine = PUBLISHED if published else DEFAULT
        return _d(combine([by_slug[s] for s in voted], list(voted.values())))


def _d(p: float) -> float:
    return discernment(p) if not math.isnan(p) else math.nan


def kind_results(data: RunScores, paired: Paired) -> list[KindResult]:
    weights = weights_by_kind(data.run.study) if data.run.study else {}
    task = _main_task(data)
    dims = sorted(data.dims)
    results = []
    for kind_id, kind in sorted(data.kinds.items(), key=lambda kv: kv[1].slug):
        pairs = {dim: paired.get((kind_id, dim), ([], [])) for dim in dims}
        results.append(
            KindResult(
                kind=kind,
                n=max((len(o) for o, _ in pairs.values()), default=0),
                p={dim: wilcoxon_p(*pairs[dim]) for dim in dims},
                weights=weights.get((task, kind.slug)),
            )
        )
    return results


def _main_task(data: RunScores) -> str:
    tasks = [t for t in data.item_task.values() if t]
    return max(set(tasks), key=tasks.count) if tasks else ""


def section(data: RunScores, paired: Paired) -> Section:
    """The discernment tables: per kind (default combination), the summary, the p-value of
    every kind and metric (one row each), and the paper's combination beside, labelled. The
    summary stays the second table (the report card reads it)."""
    labels = {d: info.label for d, info in data.dims.items()}
    results = kind_results(data, paired)
    p_rows = [
        [r.kind.name, data.dims[d].shown, r.n, significant(r.p[d])]
        for r in results
        for d in sorted(data.dims)
    ]
    published = [
        [
            r.kind.name,
            significant(r.p_combined(published=True)),
            rounded(r.d(published=True)),
            rounded(r.d_ew(labels, published=True)),
        ]
        for r in results
    ]
    return Section(
        "Discernment",
        "One-sided Wilcoxon signed-rank test per kind and metric (original scored higher than "
        "perturbed), combined per kind into one p-value; D = log_0.05(p), so D >= 1 is "
        "significant at 0.05 under the default combination. Score-invariant kinds are shown "
        "but left out of D_min and D_avg: a good judge rightly leaves their scores unchanged.",
        tables=[
            Table(
                "discernment",
                ["kind", "level", "score_invariant", "n", "M", "p", "D", "D_EW"],
                [_row(r, labels) for r in results],
                CAPTION,
            ),
            _summary(results, labels),
            Table(
                "p_values",
                ["kind", "criterion_or_metric", "n", "wilcoxon_p"],
                p_rows,
                "One-sided Wilcoxon p-value per kind and criterion or metric; n: the kind's "
                "perturbed texts scored both ways (the most over its metrics).",
            ),
            Table(
                "discernment_published",
                ["kind", "p_published", "D_published", "D_EW_published"],
                published,
                "The DHP paper's combination, 1/sum(1/p), beside the default: M times smaller "
                "than the harmonic mean for M metrics, so it overstates significance; here to "
                "compare with the paper's tables.",
            ),
        ],
    )


def _row(result: KindResult, labels: Mapping[Dim, str]) -> list[object]:
    return [
        result.kind.name,
        LEVEL_NAMES.get(result.kind.level, result.kind.level),
        "yes" if result.kind.score_invariant else "no",
        result.n,
        len(result.usable()),
        significant(result.p_combined(published=False)),
        rounded(result.d(published=False)),
        rounded(result.d_ew(labels, published=False)),
    ]


def _summary(results: list[KindResult], labels: Mapping[Dim, str]) -> Table:
    graded = [r for r in results if not r.kind.score_invariant]
    rows = []
    for name, weighted in (("D", False), ("D_EW", True)):
        figures = {}
        for published in (False, True):
            by_kind = {
                r.kind.slug: (r.d_ew(labels, published) if weighted else r.d(published))
                for r in graded
            }
            figures[published] = _aggregates(by_kind, {r.kind.slug: r.kind for r in graded})
        for statistic in ("min", "avg"):
            value, kinds = figures[False][statistic]
            published_value, _ = figures[True][statistic]
            rows.append([f"{name}_{statistic}", rounded(value), rounded(published_value), kinds])
    return Table(
        "discernment_summary",
        ["statistic", "value", "value_published", "kinds"],
        rows,
        "D_min: the worst kind; D_avg: the mean over kinds with each level (C, W, S) weighing "
        "the same and kinds in a level equally (DHP Fig. 4). Score-invariant kinds are left "
        "out (a good judge rightly leaves them unchanged), and so are kinds without a level "
        "from D_avg; kinds: how many kinds entered (N). No interval: D is a transformed "
        "p-value. value: default combination; value_published: the paper's 1/sum(1/p).",
    )


def _aggregates(
    by_kind: dict[str, float], kinds: Mapping[str, KindInfo]
) -> dict[str, tuple[float, int]]:
    defined = {k: v for k, v in by_kind.items() if not math.isnan(v)}
    levels = {k: cast(Level, kinds[k].level) for k in defined if kinds[k].level in LEVELS}
    graded = {k: defined[k] for k in levels}
    return {
        "min": (d_min(defined) if defined else math.nan, len(defined)),
        "avg": (d_avg(graded, levels) if graded else math.nan, len(graded)),
    }
