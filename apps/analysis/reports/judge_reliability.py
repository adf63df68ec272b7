"""Judge reliability of one run: discernment (§4), score deltas with S_T/S_F (§1), aspect
confusion (§1), response style (§4) and FBI failure rates (§3)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import cast

import numpy as np

from apps.analysis.controls import analysed
from apps.analysis.reports import discernment, fbi_rates, figures
from apps.analysis.reports.base import Report, Section, Table, rounded
from apps.analysis.reports.judge_data import (
    Dim,
    RunScores,
    item_deltas,
    one_measurement,
    run_scores,
)
from apps.analysis.reports.judge_data import score_distribution as distribution
from apps.analysis.stats.comparisons import (
    AFFECTED,
    NOT_AFFECTED,
    Relation,
    Verdict,
    cell_verdicts,
)
from apps.analysis.stats.deltas import (
    CellClass,
    cell_mean_estimate,
    classify_cells,
    score_delta_estimate,
    split_deltas,
)
from apps.analysis.stats.intervals import Estimate
from apps.annotation.models import Comparison
from apps.catalog.tree import lineage_slugs
from apps.judging.models import JudgeRun


def build(run: JudgeRun) -> Report:
    strategy = run.strategy
    title = f"Judge reliability: {run.judge.name}" + (f" / {strategy.name}" if strategy else "")
    report = Report("judge-reliability", title, run.study.name if run.study else "")
    data = run_scores(run)
    paired = data.by_kind_dim()
    if data.perturbed:
        report.sections.append(discernment.section(data, paired))
        report.sections.append(deltas_section(data, paired))
        report.sections.append(fbi_rates.failure_section(run, data))
    report.sections.append(confusion_section(run, data))
    report.sections.append(_response_style(run))
    if run.strategy and run.strategy.both_orders:
        report.sections.append(fbi_rates.pairwise_section(run))
    report.notes.append(
        "Scores are the mean of a text's parsed samples; unparsed outputs are left out, never "
        "counted as a score. Intervals are 95%: Wilson's for shares (over perturbed texts, each "
        "counting once however many criteria it was scored on), a bootstrap over items for "
        "means, Fisher's z for Pearson r."
    )
    if one_measurement(run):
        report.notes.append(
            "This strategy's prompt names no criterion or metric: each text was asked one "
            "question, analysed once (as 'overall') whatever criteria or metrics were chosen."
        )
    return report


def human_cell_verdicts(run: JudgeRun) -> dict[tuple[str, str], Verdict | None]:
    """(kind, aspect) → the study's pooled human verdict from comparisons (vote_all)."""
    if run.study is None:
        return {}
    cells: dict[tuple[str, str], dict[int, list[Relation]]] = defaultdict(lambda: defaultdict(list))
    for pert, kind, aspect, outcome in analysed(Comparison, run.study).values_list(
        "perturbation_id", "perturbation__kind__slug", "criterion__aspect__slug", "outcome"
    ):
        cells[(kind, aspect)][pert].append(cast(Relation, outcome))
    return cell_verdicts({c: list(s.values()) for c, s in cells.items()}, "vote_all")


Cell = tuple[int, Dim]  # (kind id, dimension)


DELTA = "Score drop (original − perturbed)"
#: The cell classes in words; the page glosses the terms S_T and S_F.
CELL_WORDS: dict[CellClass, str] = {
    "S_T": "S_T: affected, the score should drop",
    "S_F": "S_F: not affected, the score should stay",
    "neither": "neither: no agreed verdict",
}


def deltas_section(data: RunScores, paired) -> Section:
    dims = sorted(data.dims, key=lambda d: (data.dims[d].aspect, data.dims[d].shown))
    kinds = sorted(data.kinds.items(), key=lambda kv: kv[1].name)
    cells = [(k, d) for k, _ in kinds for d in dims if paired.get((k, d), ([], []))[0]]
    estimates = {cell: score_delta_estimate(*paired[cell]) for cell in cells}
    classes = cell_classes(data, cells)
    rows = [_delta_row(data, c, estimates[c], classes.get(c, "neither")) for c in cells]
    groups = _s_t_s_f_groups(data, {c: e.value for c, e in estimates.items()}, classes)
    section = Section(
        DELTA,
        f"{DELTA}: the mean over the n items scored both ways of the original's score minus "
        "the perturbed text's, on one criterion, with a bootstrap 95% interval over the items; "
        "positive when the judge scored the perturbed text lower. S_T cells (the expected "
        "impact and the people both say affected) should be clearly positive; S_F cells (both "
        "say not affected) near 0.",
        tables=[
            Table(
                "deltas",
                [
                    "kind",
                    "dimension",
                    "aspect",
                    "description_type",
                    "delta",
                    "ci_low",
                    "ci_high",
                    "n",
                    "cell",
                ],
                rows,
                f"{DELTA} per kind and criterion; n: items whose original and perturbed text "
                "were both scored on the criterion.",
            ),
            _cell_means(data, classes, item_deltas(data)),
        ],
    )
    if rows:
        section.figures.append(_delta_heatmap(data, kinds, dims, estimates, classes))
    if groups:
        section.figures.append(
            figures.boxplots(
                "s_t_s_f",
                f"{DELTA} of the S_T and S_F cells per description type",
                groups,
                ylabel=DELTA,
                caption=f"One point per (kind, criterion) cell: its {DELTA.lower()}, the mean "
                "over its items; n under each box: cells. The deltas table gives each cell's "
                "items and interval; the cell means table the interval of each box's mean.",
            )
        )
    return section


def _delta_row(data: RunScores, cell: Cell, estimate: Estimate, cell_class: CellClass) -> list:
    dim = data.dims[cell[1]]
    return [
        data.kinds[cell[0]].name,
        dim.shown,
        dim.aspect,
        dim.description_type,
        rounded(estimate.value),
        rounded(estimate.ci_low),
        rounded(estimate.ci_high),
        estimate.n,
        CELL_WORDS[cell_class],
    ]


def cell_classes(data: RunScores, cells: list[Cell]) -> dict[Cell, CellClass]:
    """S_T / S_F / neither for each cell on an aspect: the kind's expected impact (the
    catalog) beside the study's pooled human verdict on that kind and aspect."""
    lineage = lineage_slugs()
    human = human_cell_verdicts(data.run)
    expected: dict[Cell, Verdict] = {}
    verdicts: dict[Cell, Verdict | None] = {}
    for kind_id, dim in cells:
        kind, aspect = data.kinds[kind_id], data.dims[dim].aspect
        if not aspect:
            continue
        impact = lineage.get(kind.target_aspect_id, []) if kind.target_aspect_id else []
        affected = aspect in impact and not kind.score_invariant
        expected[(kind_id, dim)] = AFFECTED if affected else NOT_AFFECTED
        verdicts[(kind_id, dim)] = human.get((kind.slug, aspect))
    return classify_cells(expected, verdicts)


def _s_t_s_f_groups(
    data: RunScores, deltas: dict[Cell, float], classes: dict[Cell, CellClass]
) -> dict[str, Sequence[float]]:
    """The deltas of the S_T and of the S_F cells per description type, for the box plots."""
    groups: dict[str, Sequence[float]] = {}
    for dtype in sorted({data.dims[dim].description_type for _, dim in deltas}):
        of_type = {c: d for c, d in deltas.items() if data.dims[c[1]].description_type == dtype}
        s_t, s_f = split_deltas(of_type, classes)
        named = ((f"S_F {dtype}".strip(), s_f), (f"S_T {dtype}".strip(), s_t))
        groups |= {name: ds for name, ds in named if ds}
    return dict(sorted(groups.items()))


def _delta_heatmap(data: RunScores, kinds, dims, estimates, classes) -> figures.Figure:
    matrix = np.full((len(kinds), len(dims)), np.nan)
    counts = np.full((len(kinds), len(dims)), np.nan)
    marks = {}
    for i, (kind_id, _) in enumerate(kinds):
        for j, dim in enumerate(dims):
            if (kind_id, dim) in estimates:
                matrix[i, j] = estimates[(kind_id, dim)].value
                counts[i, j] = estimates[(kind_id, dim)].n
            if classes.get((kind_id, dim), "neither") != "neither":
                marks[(i, j)] = classes[(kind_id, dim)]
    n = {int(c) for c in counts[np.isfinite(counts)]}
    each = f"every cell over {n.pop()} items" if len(n) == 1 else "n in each cell: its items"
    return figures.heatmap(
        "deltas",
        f"{DELTA} per kind and criterion",
        matrix,
        [k.name for _, k in kinds],
        [data.dims[d].shown for d in dims],
        marks=marks,
        counts=counts,
        colorbar=DELTA,
        caption=f"{DELTA}: the mean over items of the original's score minus the perturbed "
        f"text's, per kind and criterion; red: the perturbed text scored lower, blue: higher "
        f"(a diverging scale centred on 0); {each}. S_T / S_F mark the cells that should "
        "drop / stay. The deltas table gives each cell's 95% interval.",
    )


def _cell_means(
    data: RunScores, classes: dict[Cell, CellClass], by_item: dict[Cell, dict[int, float]]
) -> Table:
    groups: dict[tuple[CellClass, str], list[Cell]] = defaultdict(list)
    for cell, cell_class in classes.items():
        if cell_class != "neither":
            groups[(cell_class, data.dims[cell[1]].description_type)].append(cell)
    rows = []
    for (cell_class, description_type), cells in sorted(groups.items()):
        items = sorted({i for c in cells for i in by_item.get(c, {})})
        matrix = [[by_item.get(c, {}).get(i, np.nan) for i in items] for c in cells]
        mean = cell_mean_estimate(matrix)
        rows.append(
            [
                CELL_WORDS[cell_class],
                description_type,
                rounded(mean.value),
                rounded(mean.ci_low),
                rounded(mean.ci_high),
                len(cells),
                mean.n,
            ]
        )
    return Table(
        "s_t_s_f_means",
        ["cell", "description_type", "mean_delta", "ci_low", "ci_high", "cells", "items"],
        rows,
        f"Mean {DELTA.lower()} of the S_T and of the S_F cells per description type (Hu et "
        "al. Fig. 4): the mean over cells of each cell's mean over its items, with a "
        "bootstrap 95% interval resampling the items (N: items; cells: how many cells).",
    )


def confusion_section(run: JudgeRun, data: RunScores) -> Section:
    """Pearson correlations between aspects over the same texts: the judge beside humans."""
    from apps.analysis.reports.human_scores import (
        aspect_correlation_figure,
        aspect_correlation_table,
        human_aspect_scores,
    )

    section = Section(
        "Aspect confusion",
        "Pearson correlation between scores on different aspects over the same texts, with "
        "its 95% interval (Fisher z) and the n texts scored on both aspects. High values for "
        "the judge but not for humans mean the judge confuses aspects.",
    )
    by_type = judge_aspect_texts(data)
    human = human_aspect_scores(
        list({i for i, _ in data.original} | {i for i, _, _ in data.perturbed})
    )
    sources = [
        (f"judge_{dtype}", f"Judge ({dtype} criteria)", texts)
        for dtype, texts in sorted(by_type.items())
    ]
    sources.append(("human", "Humans (imported ratings)", human))
    for name, title, texts in sources:
        aspects = sorted({a for scores in texts.values() for a in scores})
        if len(aspects) >= 2:
            whose = f"{title.lower()}'s scores" if name != "human" else "people's mean ratings"
            section.tables.append(aspect_correlation_table(name, texts, aspects, whose))
            section.figures.append(aspect_correlation_figure(name, title, texts, aspects, whose))
    return section


AspectTexts = dict[tuple[int, int | None], dict[str, float]]  # text -> aspect -> score


def judge_aspect_texts(data: RunScores) -> dict[str, AspectTexts]:
    """description type (or "metric") → text → aspect (or metric) → the judge's score."""
    by_type: dict[str, AspectTexts] = defaultdict(lambda: defaultdict(dict))
    for (item, dim), score in data.original.items():
        info = data.dims[dim]
        by_type[info.description_type or "metric"][(item, None)][info.aspect or info.label] = score
    for (item, pert, dim), (_, score) in data.perturbed.items():
        info = data.dims[dim]
        by_type[info.description_type or "metric"][(item, pert)][info.aspect or info.label] = score
    return by_type


def aspect_matrix(texts, aspects) -> np.ndarray:
    """Texts x aspects scores (NaN where a text was not scored on an aspect)."""
    return _matrix(texts, aspects)


def _matrix(texts, aspects) -> np.ndarray:
    return np.array([[scores.get(a, np.nan) for a in aspects] for scores in texts.values()])


def _response_style(run: JudgeRun) -> Section:
    counts = distribution(run)
    values = sorted(set(counts["originals"]) | set(counts["perturbed"]))
    rows = [[v, counts["originals"].get(v, 0), counts["perturbed"].get(v, 0)] for v in values]
    totals = {series: sum(found.values()) for series, found in counts.items()}
    section = Section(
        "Response style",
        "How often each score was given (every parsed call, samples included).",
        tables=[
            Table(
                "score_counts",
                ["score", "originals", "perturbed"],
                rows,
                "Calls per score: on originals and on perturbed texts; every parsed call "
                "counts (a text scored on several criteria or samples counts each time).",
            )
        ],
    )
    if values:
        section.figures.append(
            figures.score_counts(
                "response_style",
                "Scores on originals and perturbed texts",
                {"originals": counts["originals"], "perturbed": counts["perturbed"]},
                caption="Share of each series' parsed calls given each score; N = "
                f"{totals['originals']} calls on originals, {totals['perturbed']} on perturbed "
                "texts (counts, so no interval: the table gives them).",
            )
        )
    return section
