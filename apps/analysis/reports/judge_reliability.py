"""Judge reliability of one run: discernment (§4), score deltas with S_T/S_F (§1), aspect
confusion (§1), response style (§4) and FBI failure rates (§3)."""

from __future__ import annotations

from collections import defaultdict
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
    aspect_correlation_matrix,
    cell_mean_estimate,
    classify_cell,
    score_delta_estimate,
)
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
        report.sections.append(_deltas(data, paired))
        report.sections.append(fbi_rates.failure_section(run, data, paired))
    report.sections.append(_confusion(run, data))
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


def _deltas(data: RunScores, paired) -> Section:
    lineage = lineage_slugs()
    human = human_cell_verdicts(data.run)
    dims = sorted(data.dims, key=lambda d: (data.dims[d].aspect, data.dims[d].label))
    kinds = sorted(data.kinds.items(), key=lambda kv: kv[1].slug)
    matrix = np.full((len(kinds), len(dims)), np.nan)
    marks, rows = {}, []
    groups: dict[str, list[float]] = defaultdict(list)
    group_cells: dict[str, list[tuple[int, Dim]]] = defaultdict(list)
    for i, (kind_id, kind) in enumerate(kinds):
        impact = lineage.get(kind.target_aspect_id, []) if kind.target_aspect_id else []
        for j, dim in enumerate(dims):
            orig, pert = paired.get((kind_id, dim), ([], []))
            if not orig:
                continue
            estimate = score_delta_estimate(orig, pert)
            delta = estimate.value
            matrix[i, j] = delta
            info = data.dims[dim]
            cell = "neither"
            if info.aspect:
                expected: Verdict = (
                    AFFECTED if info.aspect in impact and not kind.score_invariant else NOT_AFFECTED
                )
                cell = classify_cell(expected, human.get((kind.slug, info.aspect)))
            if cell != "neither":
                marks[(i, j)] = cell
                groups[f"{cell} {info.description_type}"].append(delta)
                group_cells[f"{cell} {info.description_type}"].append((kind_id, dim))
            rows.append(
                [
                    kind.slug,
                    info.label,
                    info.aspect,
                    info.description_type,
                    rounded(delta),
                    rounded(estimate.ci_low),
                    rounded(estimate.ci_high),
                    estimate.n,
                    cell,
                ]
            )
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
            _cell_means(group_cells, item_deltas(data)),
        ],
    )
    if rows:
        section.figures.append(
            figures.heatmap(
                "deltas",
                "Score deltas (kinds x criteria)",
                matrix,
                [k.slug for _, k in kinds],
                [data.dims[d].label for d in dims],
                marks=marks,
            )
        )
    if groups:
        section.figures.append(
            figures.boxplots(
                "s_t_s_f", "S_T and S_F deltas per description type", dict(sorted(groups.items()))
            )
        )
    return section


def _cell_means(
    groups: dict[str, list[tuple[int, Dim]]], by_item: dict[tuple[int, Dim], dict[int, float]]
) -> Table:
    rows = []
    for name, cells in sorted(groups.items()):
        cell, _, description_type = name.partition(" ")
        items = sorted({i for c in cells for i in by_item.get(c, {})})
        matrix = [[by_item.get(c, {}).get(i, np.nan) for i in items] for c in cells]
        mean = cell_mean_estimate(matrix)
        rows.append(
            [
                cell,
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


def _confusion(run: JudgeRun, data: RunScores) -> Section:
    """Pearson correlations between aspects over the same texts: the judge beside humans."""
    from apps.analysis.reports.human_scores import human_aspect_scores

    section = Section(
        "Aspect confusion",
        "Pearson correlation between scores on different aspects over the same texts. High "
        "off-diagonal values for the judge but not for humans mean the judge confuses aspects.",
    )
    by_type: dict[str, dict[tuple[int, int | None], dict[str, float]]] = defaultdict(
        lambda: defaultdict(dict)
    )
    for (item, dim), score in data.original.items():
        info = data.dims[dim]
        by_type[info.description_type or "metric"][(item, None)][info.aspect or info.label] = score
    for (item, pert, dim), (_, score) in data.perturbed.items():
        info = data.dims[dim]
        by_type[info.description_type or "metric"][(item, pert)][info.aspect or info.label] = score
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
    return figures.heatmap(f"correlation_{name}", title, corr, aspects, aspects)


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
            )
        )
    return section
