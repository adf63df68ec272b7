"""Judge reliability of one run: discernment (§4), score deltas with S_T/S_F (§1), aspect
confusion (§1), response style (§4) and FBI failure rates (§3)."""

from __future__ import annotations

import math
from collections import defaultdict
from typing import cast

import numpy as np

from apps.analysis.reports import figures
from apps.analysis.reports.base import Report, Section, Table, rounded
from apps.analysis.reports.expert_weights import weights_by_kind
from apps.analysis.reports.judge_data import RunScores, pairwise_verdicts, run_scores
from apps.analysis.reports.judge_data import score_distribution as distribution
from apps.analysis.stats import fbi
from apps.analysis.stats.comparisons import (
    AFFECTED,
    NOT_AFFECTED,
    Relation,
    Verdict,
    cell_verdicts,
)
from apps.analysis.stats.deltas import aspect_correlation_matrix, classify_cell
from apps.analysis.stats.discernment import (
    Level,
    combined_p,
    combined_p_weighted,
    d_avg,
    d_min,
    discernment,
    wilcoxon_p,
)
from apps.annotation.models import Comparison
from apps.catalog.tree import lineage_slugs
from apps.judging.models import JudgeRun

LEVELS = ("C", "W", "S")


def build(run: JudgeRun) -> Report:
    strategy = run.strategy
    title = f"Judge reliability: {run.judge.name}" + (f" / {strategy.name}" if strategy else "")
    report = Report("judge-reliability", title, run.study.name if run.study else "")
    data = run_scores(run)
    paired = data.by_kind_dim()
    if data.perturbed:
        report.sections.append(_discernment(data, paired))
        report.sections.append(_deltas(data, paired))
        report.sections.append(_failure_rates(run, data, paired))
    report.sections.append(_confusion(run, data))
    report.sections.append(_response_style(run))
    if run.strategy and run.strategy.both_orders:
        report.sections.append(_pairwise(run, data))
    report.notes.append(
        "Scores are the mean of a text's parsed samples; unparsed outputs are left out, never "
        "counted as a score. The unweighted combined p (methods §4, as the DHP paper writes it) "
        "is M times smaller than Wilson's harmonic mean p, so D >= 1 overstates significance "
        "for M metrics; D^EW does not have this bias."
    )
    return report


def _discernment(data: RunScores, paired) -> Section:
    weights = weights_by_kind(data.run.study) if data.run.study else {}
    task = _main_task(data)
    dims = sorted(data.dims)
    rows: list[list[object]] = []
    d_by_kind: dict[str, float] = {}
    levels: dict[str, Level] = {}
    p_rows = []
    for kind_id, kind in sorted(data.kinds.items(), key=lambda kv: kv[1].slug):
        p = {dim: wilcoxon_p(*paired.get((kind_id, dim), ([], []))) for dim in dims}
        p_rows.append([kind.slug, *[rounded(p[d], 6) for d in dims]])
        usable = [v for v in p.values() if not math.isnan(v)]
        p_kind = combined_p(usable) if usable else math.nan
        d = discernment(p_kind) if not math.isnan(p_kind) else math.nan
        d_ew = _weighted_d(p, data, weights.get((task, kind.slug)))
        rows.append([kind.slug, kind.level or "", rounded(p_kind, 6), rounded(d), rounded(d_ew)])
        if not math.isnan(d):
            d_by_kind[kind.slug] = d
            if kind.level in LEVELS:
                levels[kind.slug] = cast(Level, kind.level)
    graded = {k: v for k, v in d_by_kind.items() if k in levels}
    summary = [
        ["D_min", rounded(d_min(d_by_kind)) if d_by_kind else None, len(d_by_kind)],
        ["D_avg (level-balanced)", rounded(d_avg(graded, levels)) if graded else None, len(graded)],
    ]
    return Section(
        "Discernment",
        "One-sided Wilcoxon signed-rank test per kind and metric (original greater than "
        "perturbed), combined per kind as 1/sum(1/p) and 1/sum(EW/p); D = log_0.05(p): "
        "D >= 1 is significant at 0.05.",
        tables=[
            Table("discernment", ["kind", "level", "p", "D", "D_EW"], rows),
            Table("p_values", ["kind", *[data.dims[d].label for d in dims]], p_rows),
            Table(
                "discernment_summary",
                ["statistic", "value", "kinds"],
                summary,
                "D_avg weighs each level (C, W, S) equally, kinds in a level equally.",
            ),
        ],
    )


def _main_task(data: RunScores) -> str:
    tasks = [t for t in data.item_task.values() if t]
    return max(set(tasks), key=tasks.count) if tasks else ""


def _weighted_d(p, data: RunScores, kind_weights) -> float:
    """D^EW of one kind; undefined without votes or when a voted-for metric was not scored."""
    if not kind_weights:
        return math.nan
    by_slug = {data.dims[d].label: v for d, v in p.items() if d[0] == "m"}
    voted = {slug: w for slug, w in kind_weights.items() if w > 0}
    if not set(voted) <= set(by_slug):
        return math.nan
    p_ew = combined_p_weighted([by_slug[s] for s in voted], list(voted.values()))
    return discernment(p_ew) if not math.isnan(p_ew) else math.nan


def human_cell_verdicts(run: JudgeRun) -> dict[tuple[str, str], Verdict | None]:
    """(kind, aspect) → the study's pooled human verdict from comparisons (vote_all)."""
    if run.study is None:
        return {}
    cells: dict[tuple[str, str], dict[int, list[Relation]]] = defaultdict(lambda: defaultdict(list))
    for pert, kind, aspect, outcome in Comparison.objects.filter(study=run.study).values_list(
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
    for i, (kind_id, kind) in enumerate(kinds):
        impact = lineage.get(kind.target_aspect_id, []) if kind.target_aspect_id else []
        for j, dim in enumerate(dims):
            orig, pert = paired.get((kind_id, dim), ([], []))
            if not orig:
                continue
            delta = float(np.mean(np.subtract(orig, pert)))
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
            rows.append(
                [
                    kind.slug,
                    info.label,
                    info.aspect,
                    info.description_type,
                    rounded(delta),
                    len(orig),
                    cell,
                ]
            )
    section = Section(
        "Score deltas",
        "delta = mean(score(original) - score(perturbed)). S_T: expected and humans say "
        "affected (delta should be clearly positive); S_F: both say not affected (delta "
        "should be near 0).",
        tables=[
            Table(
                "deltas",
                ["kind", "dimension", "aspect", "description_type", "delta", "n", "cell"],
                rows,
            )
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


def _failure_rates(run: JudgeRun, data: RunScores, paired) -> Section:
    family = run.strategy.family if run.strategy else "metric"
    scale_max = run.strategy.scale_max if run.strategy else None
    rows = []
    by_ability: dict[str, tuple[list[float], list[float]]] = defaultdict(lambda: ([], []))
    for kind_id, kind in sorted(data.kinds.items(), key=lambda kv: kv[1].slug):
        orig = [o for (k, _), (os_, _) in paired.items() if k == kind_id for o in os_]
        pert = [p for (k, _), (_, ps) in paired.items() if k == kind_id for p in ps]
        if not orig:
            continue
        if family == "reference" and scale_max is not None:
            rate, what = fbi.reference_guided_failure_rate(pert, scale_max), "still max score"
        elif kind.score_invariant:
            rate, what = fbi.score_invariant_success_rate(orig, pert), "success: score equal"
        else:
            rate, what = fbi.single_answer_failure_rate(orig, pert), "failure: not lower"
            ability = by_ability[kind.ability or "-"]
            ability[0].extend(orig)
            ability[1].extend(pert)
        rows.append([kind.slug, kind.ability, what, rounded(rate), len(orig)])
    ability_rows = [
        [a, rounded(fbi.single_answer_failure_rate(o, p)), len(o)]
        for a, (o, p) in sorted(by_ability.items())
    ]
    return Section(
        "Failure rates (FBI)",
        "Single-answer scoring: the share of perturbed texts not scored lower than their "
        "original (a failure to detect); for score-invariant kinds, the share scored equal.",
        tables=[
            Table("failure_rates", ["kind", "ability", "measure", "rate", "n"], rows),
            Table("failure_by_ability", ["ability", "failure_rate", "n"], ability_rows),
        ],
    )


def _pairwise(run: JudgeRun, data: RunScores) -> Section:
    rows = []
    for kind_id, judgements in sorted(pairwise_verdicts(run).items()):
        rates = fbi.pairwise_rates(judgements)
        slug = data.kinds[kind_id].slug if kind_id in data.kinds else str(kind_id)
        rows.append(
            [slug, rounded(rates.not_original), rounded(rates.detected_both), rates.n_pairs]
        )
    return Section(
        "Pairwise (both orders)",
        "not_original: the share of judgements not choosing the original; detected_both: the "
        "share of pairs where the original was chosen in both orders.",
        tables=[Table("pairwise", ["kind", "not_original", "detected_both", "pairs"], rows)],
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
    corr = aspect_correlation_matrix(_matrix(texts, aspects))
    rows = [[a, *[rounded(v) for v in corr[i]]] for i, a in enumerate(aspects)]
    return Table(f"correlation_{name}", ["aspect", *aspects], rows)


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
