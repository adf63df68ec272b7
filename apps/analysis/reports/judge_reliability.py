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
    aspect_correlation_matrix,
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
        report.sections.append(fbi_rates.failure_section(run, data, paired))
    report.sections.append(confusion_section(run, data))
    report.sections.append(_response_style(run))
    if run.strategy and run.strategy.both_orders:
        report.sections.append(fbi_rates.pairwise_section(run))
    report.notes.append(
        "Scores are the mean of a text's parsed samples; unparsed outputs are left out, never "
        "counted as a score. Intervals are 95%: Wilson's for shares, a bootstrap over items "
        "(or cells) for means."
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


def deltas_section(data: RunScores, paired) -> Section:
    dims = sorted(data.dims, key=lambda d: (data.dims[d].aspect, data.dims[d].label))
    kinds = sorted(data.kinds.items(), key=lambda kv: kv[1].slug)
    cells = [(k, d) for k, _ in kinds for d in dims if paired.get((k, d), ([], []))[0]]
    estimates = {cell: score_delta_estimate(*paired[cell]) for cell in cells}
    classes = cell_classes(data, cells)
    rows = [_delta_row(data, c, estimates[c], classes.get(c, "neither")) for c in cells]
    groups = _s_t_s_f_groups(data, {c: e.value for c, e in estimates.items()}, classes)
    section = Section(
        "Score deltas",
        "delta = mean(score(original) - score(perturbed)) over the n texts scored both ways, "
        "with a bootstrap 95% interval over them. S_T: expected and humans say affected "
        "(delta should be clearly positive); S_F: both say not affected (delta should be "
        "near 0).",
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
                "S_T and S_F deltas per description type",
                groups,
                caption="One point per cell; the table above gives each cell's N.",
            )
        )
    return section


def _delta_row(data: RunScores, cell: Cell, estimate: Estimate, cell_class: CellClass) -> list:
    dim = data.dims[cell[1]]
    return [
        data.kinds[cell[0]].slug,
        dim.label,
        dim.aspect,
        dim.description_type,
        rounded(estimate.value),
        rounded(estimate.ci_low),
        rounded(estimate.ci_high),
        estimate.n,
        cell_class,
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
        groups |= {name: ds for name, ds in ((f"S_F {dtype}", s_f), (f"S_T {dtype}", s_t)) if ds}
    return dict(sorted(groups.items()))


def _delta_heatmap(data: RunScores, kinds, dims, estimates, classes) -> figures.Figure:
    matrix = np.full((len(kinds), len(dims)), np.nan)
    marks = {}
    for i, (kind_id, _) in enumerate(kinds):
        for j, dim in enumerate(dims):
            if (kind_id, dim) in estimates:
                matrix[i, j] = estimates[(kind_id, dim)].value
            if classes.get((kind_id, dim), "neither") != "neither":
                marks[(i, j)] = classes[(kind_id, dim)]
    return figures.heatmap(
        "deltas",
        "Score deltas (kinds x criteria)",
        matrix,
        [k.slug for _, k in kinds],
        [data.dims[d].label for d in dims],
        marks=marks,
        caption="Score drop (original − perturbed) per kind and criterion; the table gives "
        "each cell's N and interval.",
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
                cell_class,
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
        "Mean delta of the S_T and of the S_F cells per description type (Hu et al. Fig. 4), "
        "with a bootstrap 95% interval over the items.",
    )


def confusion_section(run: JudgeRun, data: RunScores) -> Section:
    """Pearson correlations between aspects over the same texts: the judge beside humans."""
    from apps.analysis.reports.human_scores import human_aspect_scores

    section = Section(
        "Aspect confusion",
        "Pearson correlation between scores on different aspects over the same texts. High "
        "off-diagonal values for the judge but not for humans mean the judge confuses aspects.",
    )
    by_type = judge_aspect_texts(data)
    human = human_aspect_scores(
        list({i for i, _ in data.original} | {i for i, _, _ in data.perturbed})
    )
    for dtype, texts in sorted(by_type.items()):
        aspects = sorted({a for scores in texts.values() for a in scores})
        if len(aspects) < 2:
            continue
        section.tables.append(_correlation_table(f"judge_{dtype}", texts, aspects))
        section.figures.append(
            _correlation_figure(f"judge_{dtype}", f"Judge ({dtype} criteria)", texts, aspects)
        )
    h_aspects = sorted({a for scores in human.values() for a in scores})
    if len(h_aspects) >= 2:
        section.tables.append(_correlation_table("human", human, h_aspects))
        section.figures.append(
            _correlation_figure("human", "Humans (imported ratings)", human, h_aspects)
        )
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


def _correlation_table(name, texts, aspects) -> Table:
    matrix = _matrix(texts, aspects)
    corr = aspect_correlation_matrix(matrix)
    scored = (~np.isnan(matrix)).sum(axis=0)
    rows = [[a, *[rounded(v) for v in corr[i]], int(scored[i])] for i, a in enumerate(aspects)]
    return Table(
        f"correlation_{name}",
        ["aspect", *aspects, "n_texts"],
        rows,
        "Pearson r over the texts scored on both aspects; n_texts: texts scored on the row's "
        "aspect.",
    )


def _correlation_figure(name, title, texts, aspects):
    corr = aspect_correlation_matrix(_matrix(texts, aspects))
    return figures.heatmap(
        f"correlation_{name}",
        title,
        corr,
        aspects,
        aspects,
        scale="correlation",
        caption="Pearson r; the table gives each aspect's N.",
    )


def _response_style(run: JudgeRun) -> Section:
    counts = distribution(run)
    values = sorted(set(counts["originals"]) | set(counts["perturbed"]))
    rows = [[v, counts["originals"].get(v, 0), counts["perturbed"].get(v, 0)] for v in values]
    section = Section(
        "Response style",
        "How often each score was given (every parsed call).",
        tables=[Table("score_counts", ["score", "originals", "perturbed"], rows)],
    )
    if values:
        section.figures.append(
            figures.score_counts(
                "response_style",
                "Scores on originals and perturbed texts",
                {"originals": counts["originals"], "perturbed": counts["perturbed"]},
                caption="Share of each series' parsed calls per score; n: calls.",
            )
        )
    return section
