"""Judges side by side (docs/cards.md): every subject of an audit on the same units in one
table, a paired test per figure and pair of subjects (McNemar on detection flags, a paired
bootstrap on means and rates, Wilcoxon on per-kind discernment), corrected for the family of
comparisons with Holm (and Benjamini-Hochberg shown beside it), and a plot per figure."""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from itertools import combinations

from apps.analysis.cards.evidence import SubjectEvidence
from apps.analysis.cards.lines import summarise
from apps.analysis.cards.units import MEASURES, Measure, Units, measure_units, unit_cluster
from apps.analysis.reports import figures
from apps.analysis.reports.base import Report, Section, Table, rounded, significant
from apps.analysis.reports.meanings import with_meanings
from apps.analysis.stats.paired import (
    PairedResult,
    benjamini_hochberg,
    holm,
    mcnemar_exact,
    paired_bootstrap,
    wilcoxon_paired,
)
from apps.judging.models.audit import AuditSubject, JudgeAudit

ALPHA = 0.05


def subjects_of(audit: JudgeAudit) -> list[AuditSubject]:
    return list(
        AuditSubject.objects.filter(audit=audit)
        .select_related("judge", "strategy", "audit__study", "audit__dataset")
        .order_by("pk")
    )


def common_keys(units: Sequence[Units]) -> list[Hashable]:
    """The units every subject measured, in a stable order."""
    if not units:
        return []
    shared = set(units[0]).intersection(*(set(u) for u in units[1:]))
    return sorted(shared, key=str)


def paired_test(measure: Measure, first: Units, second: Units) -> PairedResult:
    """The two subjects compared text by text: the units both measured, each text's units
    averaged into one value (``Measure.cluster``), so that N counts texts and a text scored
    on four criteria weighs as much as a text scored on one. A share whose texts are all
    wholly 0 or 1 gets McNemar's test; one with texts in between, a paired bootstrap."""
    keys = common_keys([first, second])
    a, b = by_text(measure, first, keys), by_text(measure, second, keys)
    if measure.test == "mcnemar" and all(v in (0.0, 1.0) for v in (*a, *b)):
        return mcnemar_exact([bool(v) for v in a], [bool(v) for v in b])
    if measure.test == "wilcoxon":
        return wilcoxon_paired(a, b)
    return paired_bootstrap(a, b)


def by_text(measure: Measure, units: Units, keys: Sequence[Hashable]) -> list[float]:
    """The mean of each text's units among ``keys``, texts in a stable order."""
    texts: dict[Hashable, list[float]] = {}
    for key in keys:
        texts.setdefault(unit_cluster(measure, key), []).append(units[key])
    return [sum(v) / len(v) for _, v in sorted(texts.items(), key=lambda kv: str(kv[0]))]


def build_comparison(audit: JudgeAudit, units: dict[int, dict[str, Units]] | None = None) -> Report:
    subjects = subjects_of(audit)
    if units is None:
        units = {s.pk: measure_units(SubjectEvidence.load(s)) for s in subjects}
    where = audit.study.name if audit.study else (audit.dataset.name if audit.dataset else "")
    report = Report("audit-comparison", f"Judges side by side: {audit}", where)
    labels = [str(s) for s in subjects]
    side, measured = _side_by_side(subjects, labels, units)
    tests = _tests(subjects, labels, units)
    marks = _marks(tests)
    panels = [
        figures.Panel(
            measure.label,
            labels,
            [e.value for e in estimates],
            [e.ci_low for e in estimates],
            [e.ci_high for e in estimates],
            [e.n for e in estimates],
            [marks.get((measure.key, label), "") for label in labels],
            f"{measure.definition.unit} ({measure.definition.direction})",
        )
        for measure, estimates in measured
    ]
    if panels:
        figure = figures.estimates(
            "figures",
            "Each figure, judge by judge",
            panels,
            caption="One panel per figure: each judge's value over the units every judge "
            "measured, its 95% interval as a whisker and its N under each; * worse: "
            "significantly worse than another judge (Holm-corrected).",
        )
        report.sections.append(Section("Figures, judge by judge", figures=[figure]))
    report.sections.insert(
        0,
        Section(
            "Paired tests",
            "Each figure compared between each pair of subjects on the units both measured: "
            "McNemar's exact test on the same perturbations, pairs or texts (detected or "
            "not), a paired bootstrap (2000 resamples, seeded) on means, Wilcoxon's "
            "signed-rank test on per-kind discernment. difference: first minus second, with "
            "its 95% interval; p_holm: Holm's adjustment over every test of this table; "
            "p_bh: Benjamini-Hochberg's. significant: p_holm < 0.05, naming the worse "
            "subject.",
            tables=[tests],
        ),
    )
    report.sections.insert(
        0,
        Section(
            "Side by side",
            "Each figure of each subject over the units every subject measured (the same "
            "items), with its 95% interval and N.",
            tables=[side],
        ),
    )
    if len(subjects) < 2:
        report.warnings.append("Only one subject in this audit: nothing to compare.")
    return with_meanings(report)


def _side_by_side(subjects, labels, units) -> tuple[Table, list[tuple[Measure, list]]]:
    columns = ["key", "figure", "better"]
    for label in labels:
        columns += [f"{label}: {c}" for c in ("value", "ci_low", "ci_high", "n", "texts")]
    rows, measured = [], []
    for measure in MEASURES:
        per_subject = [units[s.pk][measure.key] for s in subjects]
        keys = common_keys(per_subject)
        if not keys:
            continue
        row: list[object] = [measure.key, measure.label, measure.definition.direction]
        estimates = [summarise(measure, {k: u[k] for k in keys}) for u in per_subject]
        for e in estimates:
            row += [
                rounded(e.value),
                rounded(e.ci_low),
                rounded(e.ci_high),
                e.n,
                e.clusters or None,
            ]
        rows.append(row)
        measured.append((measure, estimates))
    return Table("side_by_side", columns, rows), measured


TEST_COLUMNS = [
    "key",
    "figure",
    "first",
    "second",
    "test",
    "n",
    "difference",
    "ci_low",
    "ci_high",
    "p_value",
    "p_holm",
    "p_bh",
    "significant",
    "worse",
]


Units_ = dict[str, Units]


def _tests(subjects, labels, units) -> Table:
    pairs = [
        (labels[i], units[subjects[i].pk], labels[j], units[subjects[j].pk])
        for i, j in combinations(range(len(subjects)), 2)
    ]
    return paired_tests(pairs)


def paired_tests(pairs: Sequence[tuple[str, Units_, str, Units_]]) -> Table:
    """Every figure of each pair of subjects (label, units by figure) compared on the units
    both measured, the whole table corrected for its family of tests (Holm; BH beside)."""
    found: list[tuple[Measure, str, str, PairedResult]] = []
    for first_label, first, second_label, second in pairs:
        for measure in MEASURES:
            result = paired_test(measure, first[measure.key], second[measure.key])
            if result.n:
                found.append((measure, first_label, second_label, result))
    p = [r.p for *_, r in found]
    adjusted, fdr = holm(p), benjamini_hochberg(p)
    rows = []
    for (measure, a, b, r), p_holm, p_bh in zip(found, adjusted, fdr, strict=True):
        worse = _worse(measure, r, a, b)
        hit = not math.isnan(p_holm) and p_holm < ALPHA and worse != ""
        rows.append(
            [
                measure.key,
                measure.label,
                a,
                b,
                r.test,
                r.n,
                rounded(r.difference),
                rounded(r.ci_low),
                rounded(r.ci_high),
                significant(r.p),
                significant(p_holm),
                significant(p_bh),
                "yes" if hit else "no",
                worse if hit else "",
            ]
        )
    return Table("paired_tests", TEST_COLUMNS, rows)


def _worse(measure: Measure, result: PairedResult, first: str, second: str) -> str:
    if math.isnan(result.difference) or result.difference == 0:
        return ""
    first_higher = result.difference > 0
    return first if first_higher == (measure.worse == "higher") else second


def _marks(tests: Table) -> dict[tuple[str, str], str]:
    """(figure key, subject) → "* worse" where that subject is significantly worse."""
    worse = TEST_COLUMNS.index("worse")
    key = TEST_COLUMNS.index("key")
    return {(str(row[key]), str(row[worse])): "* worse" for row in tests.rows if row[worse]}
