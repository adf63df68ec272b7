"""Criterion descriptions (methods §1, Hu et al. Tables 1/5 and Fig. 8; docs/analysis.md): how
well a judge's scores follow the humans' for each description type of a criterion, and how
much its scores under different description types of the same aspect agree with each other."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping

import numpy as np
from scipy import stats

from apps.analysis.reports import figures
from apps.analysis.reports.base import Figure, Section, Table, rounded
from apps.analysis.reports.judge_data import Dim, RunScores
from apps.analysis.stats.deltas import aspect_correlation_matrix

Unit = tuple[int, int | None]
#: criterion (aspect slug) -> text -> rater -> score, as judge_vs_human reads imported ratings
Humans = Mapping[str, Mapping[Unit, Mapping[str, float]]]


def _criterion_scores(data: RunScores) -> dict[tuple[str, str], dict[Unit, float]]:
    """(aspect, description type) -> text -> the judge's score, for criteria dimensions."""
    out: dict[tuple[str, str], dict[Unit, float]] = defaultdict(dict)
    texts: list[tuple[Unit, Dim, float]] = [
        ((item, None), dim, s) for (item, dim), s in data.original.items()
    ]
    texts += [((item, pert), dim, s) for (item, pert, dim), (_, s) in data.perturbed.items()]
    for unit, dim, score in texts:
        info = data.dims[dim]
        if dim[0] == "c" and info.aspect:
            out[(info.aspect, info.description_type)][unit] = score
    return out


def _pearson(x: list[float], y: list[float]) -> tuple[float, float, float]:
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan, math.nan, math.nan
    result = stats.pearsonr(x, y)
    ci = result.confidence_interval(0.95)
    return float(result.statistic), float(ci.low), float(ci.high)


def section(label: str, data: RunScores, humans: Humans, origin: str = "") -> Section | None:
    """None when the run has no criteria with a description type. Tables are named after
    the run (``judge_human_pearson_run<id>``); against human ratings from elsewhere than the
    imported ones (`origin`: "collected in this study"), ``..._run<id>_collected``."""
    suffix = f"_run{data.run.pk}" + ("_collected" if origin else "")
    if origin:
        label = f"{label}, humans {origin}"
    scores = _criterion_scores(data)
    if not scores:
        return None
    rows = []
    for (aspect, dtype), judged in sorted(scores.items()):
        human = {u: float(np.mean(list(r.values()))) for u, r in humans.get(aspect, {}).items()}
        units = sorted(set(judged) & set(human), key=str)
        r, low, high = _pearson([judged[u] for u in units], [human[u] for u in units])
        rows.append([aspect, dtype, rounded(r), rounded(low), rounded(high), len(units)])
    section = Section(
        f"Criterion descriptions: {label}",
        "Pearson r between the judge's score and the humans' mean rating per aspect and "
        "description type (Hu et al. Tables 1 and 5), with its 95% interval (Fisher z) over "
        "the n texts both scored; then the correlation of the judge's scores between "
        "description types of the same aspect, over texts and aspects (Fig. 8).",
        tables=[
            Table(
                f"judge_human_pearson{suffix}",
                ["aspect", "description_type", "r", "ci_low", "ci_high", "n"],
                rows,
            )
        ],
    )
    between = None if origin else _between_types(scores, suffix)  # the judge's alone: once
    if between is not None:
        table, figure = between
        section.tables.append(table)
        section.figures.append(figure)
    return section


def _between_types(
    scores: dict[tuple[str, str], dict[Unit, float]], suffix: str
) -> tuple[Table, Figure] | None:
    types = sorted({dtype for _, dtype in scores})
    if len(types) < 2:
        return None
    rows_by_unit: dict[tuple[Unit, str], dict[str, float]] = defaultdict(dict)
    for (aspect, dtype), judged in scores.items():
        for unit, value in judged.items():
            rows_by_unit[(unit, aspect)][dtype] = value
    matrix = np.array([[row.get(t, np.nan) for t in types] for row in rows_by_unit.values()])
    corr = aspect_correlation_matrix(matrix)
    counts = (~np.isnan(matrix)).astype(int)
    shared = counts.T @ counts
    rows = [
        [t, *[rounded(v) for v in corr[i]], *[int(c) for c in shared[i]]]
        for i, t in enumerate(types)
    ]
    table = Table(
        f"description_type_correlation{suffix}",
        ["description_type", *types, *[f"n_{t}" for t in types]],
        rows,
        "Pearson r of the judge's scores between description types over (text, aspect) "
        "units scored under both; n_<type>: how many such units.",
    )
    figure = figures.heatmap(
        f"description_type_correlation{suffix}",
        "Judge scores between description types",
        corr,
        types,
        types,
        scale="correlation",
        caption="Pearson r; the table gives each pair's N.",
    )
    return table, figure
