"""Human agreement: vetting verdicts and pairwise comparisons of one study (methods §2, §3, §8).

Consistency is computed on choices normalized to the original-first reading (A: the original
is better, i.e. the perturbed text is worse; B: the perturbed is better; C: same; D:
uncertain), because raw letters mean opposite things under the two display orders.
"""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np

from apps.analysis.controls import analysed, control_accuracy, excluded_note
from apps.analysis.reports import figures
from apps.analysis.reports.base import Report, Section, Table, rounded
from apps.analysis.reports.imported_agreement import (
    BOOTSTRAP,
    agreement_cells,
    collected_section,
    imported_section,
)
from apps.analysis.reports.judge_vs_human import labelled, rating_sources
from apps.analysis.reports.rater_quality import rater_warnings
from apps.analysis.stats.agreement import cohen_kappa_with_ci
from apps.analysis.stats.comparisons import (
    AFFECTED,
    annotation_consistency,
    cell_verdicts,
    match_rate,
)
from apps.analysis.stats.intervals import mean_interval, share_interval
from apps.annotation.models import Comparison, Study, Vetting
from apps.catalog.tree import lineage_slugs

CANONICAL = {"worse": "A", "better": "B", "same": "C", "uncertain": "D"}
VERDICTS = ["valid", "invalid", "score-invariant", "not-relevant", "not-sure"]


def reliability_matrix(rows: list[tuple[object, object, object]]) -> np.ndarray:
    """(unit, rater, value) triples → a raters x units object array, None where missing."""
    units = sorted({u for u, _, _ in rows}, key=str)
    raters = sorted({r for _, r, _ in rows}, key=str)
    col = {u: i for i, u in enumerate(units)}
    row = {r: i for i, r in enumerate(raters)}
    matrix = np.full((len(raters), len(units)), None, dtype=object)
    for unit, rater, value in rows:
        matrix[row[rater], col[unit]] = value
    return matrix


def agreement_row(label: str, matrix: np.ndarray) -> list[object]:
    cells = agreement_cells(matrix, "nominal")
    if matrix.size and matrix.shape[0] == 2:
        kappa = cohen_kappa_with_ci(matrix, n_resamples=BOOTSTRAP)
        kappa_cells = [rounded(kappa.value), rounded(kappa.ci_low), rounded(kappa.ci_high)]
    else:
        kappa_cells = [None, None, None]
    return [label, *cells[:6], *kappa_cells, *cells[6:]]


AGREEMENT_COLUMNS = [
    "judgement",
    "alpha",
    "ci_low",
    "ci_high",
    "percent_agreement",
    "percent_ci_low",
    "percent_ci_high",
    "cohen_kappa",
    "kappa_ci_low",
    "kappa_ci_high",
    "n_units",
    "n_raters",
]


def build(study: Study) -> Report:
    report = Report("human-agreement", "Human agreement", study.name)
    vettings = list(
        analysed(Vetting, study).values_list(
            "perturbation_id", "annotator_id", "verdict", "perturbation__kind__slug"
        )
    )
    comparisons = list(
        analysed(Comparison, study).values_list(
            "perturbation_id",
            "criterion_id",
            "annotator_id",
            "outcome",
            "perturbation__kind__slug",
            "perturbation__kind__target_aspect_id",
            "perturbation__kind__score_invariant",
            "criterion__aspect__slug",
            "criterion__description_type",
        )
    )
    report.warnings.extend(rater_warnings(labelled(rating_sources(study))))
    report.sections.append(_agreement_section(vettings, comparisons))
    report.sections.append(_vetting_section(vettings))
    report.sections.extend(_comparison_sections(comparisons))
    report.sections.append(imported_section(study))
    report.sections.append(collected_section(study))
    report.sections.append(controls_section(study))
    if note := excluded_note(study):
        report.notes.append(note)
    report.notes.append(
        "Alpha is nominal, with a bootstrap 95% interval over units; percent agreement is "
        "pairwise over units with two or more ratings; Cohen's kappa only for two raters; "
        "both with a percentile bootstrap 95% interval over units. "
        "Ratings of texts (imported, and collected in this study by direct assessment) use "
        "ordinal alpha, the same interval and exact score match."
    )
    return report


def _agreement_section(vettings, comparisons) -> Section:
    vet = reliability_matrix([(p, a, v) for p, a, v, _ in vettings])
    cmp_ = reliability_matrix([((p, c), a, o) for p, c, a, o, *_ in comparisons])
    rows = [agreement_row("vetting verdicts", vet), agreement_row("comparison outcomes", cmp_)]
    return Section("Agreement", tables=[Table("agreement", AGREEMENT_COLUMNS, rows)])


def _vetting_section(vettings) -> Section:
    by_kind: dict[str, Counter[str]] = defaultdict(Counter)
    for _, _, verdict, kind in vettings:
        by_kind[kind][verdict] += 1
    rows = []
    for kind in sorted(by_kind):
        counts = by_kind[kind]
        share = share_interval(counts["valid"], sum(counts.values()))
        rows.append(
            [
                kind,
                *[counts[v] for v in VERDICTS],
                share.n,
                rounded(share.value),
                rounded(share.ci_low),
                rounded(share.ci_high),
            ]
        )
    table = Table(
        "vetting_by_kind",
        ["kind", *VERDICTS, "total", "valid_share", "ci_low", "ci_high"],
        rows,
        "Vetting verdicts per perturbation kind; the valid share with its Wilson 95% interval "
        "over the verdicts.",
    )
    return Section("Vetting", tables=[table])


def _comparison_sections(comparisons) -> list[Section]:
    pairs: dict[tuple[int, int], list[str]] = defaultdict(list)
    for perturbation, criterion, _, outcome, *_ in comparisons:
        pairs[(perturbation, criterion)].append(CANONICAL[outcome])
    consistency = mean_interval([annotation_consistency(options) for options in pairs.values()])
    summary = Table(
        "consistency",
        ["pairs", "annotations", "mean_consistency", "ci_low", "ci_high"],
        [
            [
                len(pairs),
                len(comparisons),
                rounded(consistency.value),
                rounded(consistency.ci_low),
                rounded(consistency.ci_high),
            ]
        ],
        "Share of the most chosen of A/B/C among all annotations of a pair (D "
        "counts in the denominator), averaged over pairs, with a bootstrap 95% "
        "interval over the pairs.",
    )
    match, cells, figure = _match_rates(comparisons)
    section = Section("Comparisons", tables=[summary, match, cells])
    if figure is not None:
        section.figures.append(figure)
    return [section]


def _match_rates(comparisons):
    """Per description type: the human verdict of each (kind, aspect) cell by vote_all and
    vote_vote, against the expected impact; plus the pooled cell verdicts."""
    lineage = lineage_slugs()
    samples: dict[str, dict[tuple[str, str], dict[int, list[str]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list))
    )
    expected: dict[tuple[str, str], str] = {}
    for perturbation, _, _, outcome, kind, target, invariant, aspect, dtype in comparisons:
        cell = (kind, aspect)
        for key in (dtype, "all types"):
            samples[key][cell][perturbation].append(outcome)
        impact = lineage.get(target, []) if target and not invariant else []
        expected[cell] = AFFECTED if aspect in impact else "not_affected"
    rows, pooled = [], {}
    for dtype in sorted(samples, key=lambda d: (d == "all types", d)):
        cells = {cell: list(by_sample.values()) for cell, by_sample in samples[dtype].items()}
        both = {m: cell_verdicts(cells, m) for m in ("vote_all", "vote_vote")}
        rates = {m: match_rate(v, {c: expected[c] for c in cells}) for m, v in both.items()}
        vote_all = share_interval(rates["vote_all"].matched, len(cells))
        vote_vote = share_interval(rates["vote_vote"].matched, len(cells))
        rows.append(
            [
                dtype,
                len(cells),
                rates["vote_all"].matched,
                rounded(rates["vote_all"].rate),
                rounded(vote_all.ci_low),
                rounded(vote_all.ci_high),
                rates["vote_vote"].matched,
                rounded(rates["vote_vote"].rate),
                rounded(vote_vote.ci_low),
                rounded(vote_vote.ci_high),
                rates["vote_all"].undecided,
            ]
        )
        if dtype == "all types":
            pooled = both["vote_all"]
    table = Table(
        "match_rates",
        [
            "description_type",
            "cells",
            "matched_vote_all",
            "match_rate_vote_all",
            "vote_all_ci_low",
            "vote_all_ci_high",
            "matched_vote_vote",
            "match_rate_vote_vote",
            "vote_vote_ci_low",
            "vote_vote_ci_high",
            "undecided_vote_all",
        ],
        rows,
        "Cells (kind, aspect) whose human verdict equals the expected impact, with the "
        "Wilson 95% interval over the cells. A tie or only 'uncertain' answers leave a cell "
        "undecided, counted as a miss.",
    )
    cell_rows = [[k, a, pooled.get((k, a)), expected[(k, a)]] for k, a in sorted(pooled)]
    cells_table = Table(
        "cell_verdicts", ["kind", "aspect", "human_verdict_vote_all", "expected"], cell_rows
    )
    return table, cells_table, _cell_figure(pooled, expected)


def _cell_figure(pooled, expected):
    if not pooled:
        return None
    kinds = sorted({k for k, _ in pooled})
    aspects = sorted({a for _, a in pooled})
    value = {AFFECTED: 1.0, "not_affected": 0.0}
    matrix = np.full((len(kinds), len(aspects)), np.nan)
    marks = {}
    for (kind, aspect), verdict in pooled.items():
        i, j = kinds.index(kind), aspects.index(aspect)
        matrix[i, j] = value.get(verdict, np.nan) if verdict else np.nan
        marks[(i, j)] = "E" if expected[(kind, aspect)] == AFFECTED else ""
    return figures.heatmap(
        "cell_verdicts",
        "Human verdict per (kind, aspect): 1 affected",
        matrix,
        kinds,
        aspects,
        marks=marks,
        scale="sequential",
        fmt="{:.0f}",
        caption="E marks cells the tree expects affected.",
    )


def controls_section(study: Study) -> Section:
    """Each annotator's accuracy on the control items (answers with a known answer, mixed in
    unannounced), with the threshold's verdict; their answers count nowhere else."""
    rows = [
        [
            row.username,
            row.n,
            row.right,
            rounded(row.estimate.value),
            rounded(row.estimate.ci_low),
            rounded(row.estimate.ci_high),
            row.flagged,
            row.excluded,
        ]
        for row in control_accuracy(study)
    ]
    threshold = (
        f"threshold {study.control_threshold}%"
        if study.control_threshold is not None
        else "no threshold set"
    )
    columns = ["annotator", "n", "right", "accuracy", "ci_low", "ci_high", "flagged", "excluded"]
    return Section(
        "Control items",
        text=f"Accuracy on control items, with its Wilson 95% interval ({threshold}). Answers "
        "to control items are not data: no other figure counts them."
        if rows
        else "No control item has been answered in this study.",
        tables=[Table("control_accuracy", columns, rows)] if rows else [],
    )
