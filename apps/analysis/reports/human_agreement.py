"""Human agreement: vetting verdicts and pairwise comparisons of one study (methods §2, §3, §8),
ratings of texts, and the sections kinds of work add to it (reports/sections.py).

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
    no_figure_text,
)
from apps.analysis.reports.judge_vs_human import labelled, rating_sources
from apps.analysis.reports.rater_quality import rater_checks, rater_section, warnings_of
from apps.analysis.reports.sections import kind_sections
from apps.analysis.stats.agreement import cohen_kappa_with_ci
from apps.analysis.stats.comparisons import (
    AFFECTED,
    NOT_AFFECTED,
    annotation_consistency,
    cell_verdicts,
    cell_votes,
    match_rate,
    share_over_texts,
    vote_all,
)
from apps.analysis.stats.intervals import clustered_mean, share_interval
from apps.annotation.models import Comparison, Study, Vetting
from apps.catalog.tree import lineage_slugs

CANONICAL = {"worse": "A", "better": "B", "same": "C", "uncertain": "D"}
VERDICTS = ["valid", "invalid", "score-invariant", "not-relevant", "not-sure"]
#: A cell's verdict as people read it (None: a tie, or only "uncertain" answers).
VERDICT_WORDS = {AFFECTED: "affected", NOT_AFFECTED: "not affected", None: "undecided"}


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
    "human_alpha",
    "ci_low",
    "ci_high",
    "percent_agreement",
    "percent_ci_low",
    "percent_ci_high",
    "cohen_kappa",
    "kappa_ci_low",
    "kappa_ci_high",
    "n_ratings",
    "n_units",
    "n_raters",
    "n_units_compared",
    "no_figure_because",
]
AGREEMENT_N = (
    "Nominal alpha and percent agreement with percentile bootstrap 95% intervals over the "
    "units rated twice or more; Cohen's kappa only for exactly two raters. N: answers "
    "(ratings), units answered, people (raters), and units answered by two people or more "
    "(the units every figure compares)."
)


def cells_of(row: list[object]) -> list[object]:
    """An agreement_row back in agreement_cells' order (kappa taken out)."""
    return [*row[1:7], *row[10:]]


def build(study: Study) -> Report:
    report = Report("human-agreement", "Human agreement", study.name)
    vettings = list(
        analysed(Vetting, study).values_list(
            "perturbation_id", "annotator_id", "verdict", "perturbation__kind__name"
        )
    )
    comparisons = list(
        analysed(Comparison, study).values_list(
            "perturbation_id",
            "criterion_id",
            "annotator_id",
            "outcome",
            "perturbation__kind__name",
            "perturbation__kind__target_aspect_id",
            "perturbation__kind__score_invariant",
            "criterion__aspect__slug",
            "criterion__description_type",
            "criterion__aspect__name",
        )
    )
    checks = rater_checks(labelled(rating_sources(study)))
    report.warnings.extend(warnings_of(checks))
    report.sections.append(_agreement_section(vettings, comparisons))
    report.sections.append(_vetting_section(vettings))
    report.sections.extend(_comparison_sections(comparisons))
    report.sections.append(imported_section(study))
    report.sections.append(collected_section(study))
    for section in kind_sections("human-agreement"):  # each kind's, given the study
        if (built := section(study)) is not None:
            report.sections.append(built)
    if checks:
        report.sections.append(rater_section(checks))
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
    return Section(
        "Agreement",
        "Units: a perturbed text (vetting verdicts); a perturbed text under one criterion "
        "(comparison outcomes)." + no_figure_text([(str(r[0]), cells_of(r)) for r in rows]),
        tables=[Table("agreement", AGREEMENT_COLUMNS, rows, AGREEMENT_N)],
    )


def _vetting_section(vettings) -> Section:
    by_kind: dict[str, Counter[str]] = defaultdict(Counter)
    texts: dict[str, set[int]] = defaultdict(set)
    for perturbation, _, verdict, kind in vettings:
        by_kind[kind][verdict] += 1
        texts[kind].add(perturbation)
    rows = []
    for kind in sorted(by_kind):
        counts = by_kind[kind]
        share = share_over_texts(counts["valid"], sum(counts.values()), len(texts[kind]))
        rows.append(
            [
                kind,
                *[counts[v] for v in VERDICTS],
                share.n,
                len(texts[kind]),
                rounded(share.value),
                rounded(share.ci_low),
                rounded(share.ci_high),
            ]
        )
    table = Table(
        "vetting_by_kind",
        ["kind", *VERDICTS, "total", "texts", "valid_share", "ci_low", "ci_high"],
        rows,
        "Vetting verdicts per perturbation kind. N: verdicts (total) on the kind's perturbed "
        "texts (texts). The valid share counts every verdict; its Wilson 95% interval counts "
        "each text once, since several people's verdicts on one text are not independent.",
    )
    return Section("Vetting", tables=[table])


def _comparison_sections(comparisons) -> list[Section]:
    pairs: dict[tuple[int, int], list[str]] = defaultdict(list)
    for perturbation, criterion, _, outcome, *_ in comparisons:
        pairs[(perturbation, criterion)].append(CANONICAL[outcome])
    consistency = clustered_mean(
        [annotation_consistency(options) for options in pairs.values()],
        [perturbation for perturbation, _ in pairs],
    )
    summary = Table(
        "consistency",
        ["pairs", "texts", "annotations", "mean_consistency", "ci_low", "ci_high"],
        [
            [
                len(pairs),
                consistency.clusters,
                len(comparisons),
                rounded(consistency.value),
                rounded(consistency.ci_low),
                rounded(consistency.ci_high),
            ]
        ],
        "Share of the most chosen of A/B/C among all annotations of a pair (D "
        "counts in the denominator), averaged over pairs (a perturbed text under one "
        "criterion), with a cluster bootstrap 95% interval resampling the perturbed texts "
        "with all their pairs. N: pairs, perturbed texts, annotations.",
    )
    match, cells, figure = _match_rates(comparisons)
    section = Section("Comparisons", tables=[summary, match, cells])
    if figure is not None:
        section.figures.append(figure)
    return [section]


Cell = tuple[str, str]  # (kind name, aspect slug)


def _match_rates(comparisons):
    """Per description type: the human verdict of each (kind, aspect) cell by vote_all and
    vote_vote, against the expected impact; plus the pooled cell verdicts and their votes."""
    lineage = lineage_slugs()
    samples: dict[str, dict[Cell, dict[int, list[str]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list))
    )
    expected: dict[Cell, str] = {}
    aspect_names: dict[str, str] = {}
    for pert, _, _, outcome, kind, target, invariant, aspect, dtype, name in comparisons:
        cell = (kind, aspect)
        aspect_names[aspect] = name
        for key in (dtype, "all types"):
            samples[key][cell][pert].append(outcome)
        impact = lineage.get(target, []) if target and not invariant else []
        expected[cell] = AFFECTED if aspect in impact else NOT_AFFECTED
    rows = []
    for dtype in sorted(samples, key=lambda d: (d == "all types", d)):
        cells = {cell: list(by_sample.values()) for cell, by_sample in samples[dtype].items()}
        rows.append(_match_row(dtype, cells, expected))
    pooled = {c: list(s.values()) for c, s in samples.get("all types", {}).items()}
    return (
        Table("match_rates", MATCH_COLUMNS, rows, MATCH_CAPTION),
        _cells_table(pooled, expected, aspect_names),
        _cell_figure(pooled, expected, aspect_names),
    )


MATCH_COLUMNS = [
    "description_type",
    "cells",
    "annotations",
    "matched_vote_all",
    "match_rate_vote_all",
    "vote_all_ci_low",
    "vote_all_ci_high",
    "matched_vote_vote",
    "match_rate_vote_vote",
    "vote_vote_ci_low",
    "vote_vote_ci_high",
    "undecided_vote_all",
]
MATCH_CAPTION = (
    "Cells (kind, aspect) whose human verdict equals the expected impact, with the Wilson 95% "
    "interval over the cells. A tie or only 'uncertain' answers leave a cell undecided, "
    "counted as a miss. N: cells (the rate's denominator) and the annotations behind their "
    "verdicts."
)


def _match_row(dtype: str, cells, expected) -> list[object]:
    both = {m: cell_verdicts(cells, m) for m in ("vote_all", "vote_vote")}
    rates = {m: match_rate(v, {c: expected[c] for c in cells}) for m, v in both.items()}
    shares = {m: share_interval(rates[m].matched, len(cells)) for m in rates}
    annotations = sum(len(sample) for samples in cells.values() for sample in samples)
    return [
        dtype,
        len(cells),
        annotations,
        *[
            value
            for m in ("vote_all", "vote_vote")
            for value in (
                rates[m].matched,
                rounded(rates[m].rate),
                rounded(shares[m].ci_low),
                rounded(shares[m].ci_high),
            )
        ],
        rates["vote_all"].undecided,
    ]


CELL_COLUMNS = [
    "kind",
    "aspect",
    "human_verdict_vote_all",
    "expected",
    "affected_share",
    "ci_low",
    "ci_high",
    "annotations",
    "texts",
]


def _cells_table(pooled, expected, aspect_names) -> Table:
    rows = []
    for kind, aspect in sorted(pooled, key=lambda c: (c[0], aspect_names[c[1]])):
        votes = cell_votes(pooled[(kind, aspect)])
        share = votes.affected_share
        rows.append(
            [
                kind,
                aspect_names[aspect],
                VERDICT_WORDS[vote_all(pooled[(kind, aspect)])],
                VERDICT_WORDS[expected[(kind, aspect)]],
                rounded(share.value),
                rounded(share.ci_low),
                rounded(share.ci_high),
                votes.annotations,
                votes.texts,
            ]
        )
    return Table(
        "cell_verdicts",
        CELL_COLUMNS,
        rows,
        "The human verdict of each (kind, aspect) from all its annotations pooled (every "
        "description type), beside the impact the aspect tree expects. Affected share: the "
        "votes saying the perturbed text is worse among those that voted ('uncertain' does "
        "not vote; above 0.5 the verdict is affected), with a Wilson 95% interval counting "
        "each perturbed text once. N: annotations (uncertain included) on the cell's "
        "perturbed texts (texts).",
    )


def _cell_figure(pooled, expected, aspect_names):
    if not pooled:
        return None
    kinds = sorted({k for k, _ in pooled})
    aspects = sorted({a for _, a in pooled}, key=lambda a: aspect_names[a])
    value = {AFFECTED: 1.0, NOT_AFFECTED: 0.0}
    matrix = np.full((len(kinds), len(aspects)), np.nan)
    counts = np.full((len(kinds), len(aspects)), np.nan)
    marks = {}
    for (kind, aspect), samples in pooled.items():
        i, j = kinds.index(kind), aspects.index(aspect)
        verdict = vote_all(samples)
        matrix[i, j] = value[verdict] if verdict else np.nan
        counts[i, j] = cell_votes(samples).annotations
        marks[(i, j)] = "E" if expected[(kind, aspect)] == AFFECTED else ""
    shown = sorted({int(n) for n in counts[np.isfinite(counts)].ravel()})
    per_cell = (
        f"every cell rests on {shown[0]} annotations"
        if len(shown) == 1
        else "n in a cell: the annotations behind it"
    )
    return figures.heatmap(
        "cell_verdicts",
        "Human verdict per (kind, aspect): 1 affected, 0 not affected",
        matrix,
        kinds,
        [aspect_names[a] for a in aspects],
        marks=marks,
        counts=counts,
        scale="sequential",
        fmt="{:.0f}",
        caption="A cell is one perturbation kind (row) on one aspect (column): 1 when the "
        "pooled human votes say the perturbed texts are worse on that aspect, 0 when not, "
        "blank when undecided (a tie, or only 'uncertain'). E marks cells the aspect tree "
        f"expects affected. N: {per_cell}; the cell_verdicts table gives each cell's "
        "affected share with its interval.",
    )


CONTROL_N = "N: the annotator's answers to control items (n), of which right (right)."


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
            _yes(row.flagged),
            _yes(row.excluded),
        ]
        for row in control_accuracy(study)
    ]
    threshold = (
        f"threshold {study.control_threshold}%"
        if study.control_threshold is not None
        else "no threshold set"
    )
    columns = [
        "annotator",
        "n",
        "right",
        "control_accuracy",
        "ci_low",
        "ci_high",
        "flagged",
        "excluded",
    ]
    return Section(
        "Control items",
        text=f"Accuracy on control items, with its Wilson 95% interval ({threshold}). Answers "
        "to control items are not data: no other figure counts them."
        if rows
        else "No control item has been answered in this study.",
        tables=[Table("control_accuracy", columns, rows, CONTROL_N)] if rows else [],
    )


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"
