"""Criterion descriptions (methods §1, Hu et al. Tables 1/5 and Fig. 8; docs/analysis.md): how
well a judge's scores follow the humans' for each description type of a criterion, and how
much its scores under different description types of the same aspect agree with each other."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping

import numpy as np

from apps.analysis.definitions.human import FISHER
from apps.analysis.reports import figures
from apps.analysis.reports.base import Figure, Section, Table, rounded
from apps.analysis.reports.judge_data import Dim, RunScores
from apps.analysis.stats.agreement import (
    correlation_square,
    pairwise_correlations,
    pearson_with_ci,
)

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
        r = pearson_with_ci([judged[u] for u in units], [human[u] for u in units])
        rows.append([aspect, dtype, rounded(r.value), rounded(r.ci_low), rounded(r.ci_high), r.n])
    section = Section(
        f"Criterion descriptions: {label}",
        "Pearson r between the judge's score and the humans' mean rating per aspect and "
        "description type (Hu et al. Tables 1 and 5); then the correlation of the judge's "
        "scores between description types of the same aspect, over texts and aspects "
        "(Fig. 8).",
        tables=[
            Table(
                f"judge_human_pearson{suffix}",
                ["aspect", "description_type", "judge_human_r", "ci_low", "ci_high", "n"],
                rows,
                f"{FISHER}. N: texts the judge scored under the description and people rated "
                "(n); undefined below 3 texts or when either side never varies.",
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
    pairs = pairwise_correlations(matrix)
    rows = [
        [types[i], types[j], rounded(r.value), rounded(r.ci_low), rounded(r.ci_high), r.n]
        for (i, j), r in pairs.items()
    ]
    table = Table(
        f"description_type_correlation{suffix}",
        ["description_type", "other_type", "r_between_types", "ci_low", "ci_high", "n"],
        rows,
        "Pearson r of the judge's scores between two description types of the same aspects, "
        f"over (text, aspect) units scored under both. {FISHER}. N: those units (n).",
    )
    corr, counts = correlation_square(pairs, matrix)
    figure = figures.heatmap(
        f"description_type_correlation{suffix}",
        "Judge scores between description types",
        corr,
        types,
        types,
        scale="correlation",
        counts=counts,
        caption="A cell is Pearson r between the judge's scores under two description types "
        "over the (text, aspect) units scored under both; n in a cell: those units (the "
        "diagonal: units scored under the type). The table gives each r's 95% interval.",
    )
    return table, figure
