"""The report card of one judge and strategy (docs/cards.md): one line per figure with its
N, its 95% interval and a link to the evidence; the worst kinds and examples next; then the
detail the existing reports compute (the same sections, built from the subject's runs); a
part that was skipped or holds no data says why.
"""

from __future__ import annotations

from django.db.models import Q

from apps.analysis.cards import lines as card_lines
from apps.analysis.cards.evidence import (
    SubjectEvidence,
    perturbation_link,
    run_link,
)
from apps.analysis.cards.units import Units, cue_baseline, measure_units
from apps.analysis.reports import discernment, fbi_rates
from apps.analysis.reports.adversarial import (
    asr_section,
    examples_section,
    inline_diff,
    search_finals,
)
from apps.analysis.reports.base import Report, Section, Table, rounded
from apps.analysis.reports.judge_reliability import confusion_section, deltas_section
from apps.analysis.reports.judge_vs_human import judge_human_section, judge_means, rating_sources
from apps.analysis.reports.prompting_strategies import match_rows
from apps.corpus.models import Perturbation
from apps.judging.models.audit import AuditSubject, PartKind

CARD_COLUMNS = ["figure", "part", "value", "ci_low", "ci_high", "n", "unit", "note", "evidence"]
EXAMPLES = 10


def build_card(subject: AuditSubject, units: dict[str, Units] | None = None) -> Report:
    evidence = SubjectEvidence.load(subject)
    audit = subject.audit
    where = audit.study.name if audit.study else (audit.dataset.name if audit.dataset else "")
    report = Report("audit-card", f"Report card: {evidence.label}", where)
    units = units if units is not None else measure_units(evidence)
    rows = card_lines.lines(evidence, units)
    report.sections.append(
        Section(
            "Report card",
            "One line per figure: its value, 95% interval (Wilson's for shares, a bootstrap "
            "over the units for means) and N, with a link to the evidence (the run's calls, "
            "the search, the texts). The worst kinds and examples follow.",
            tables=[Table("card", CARD_COLUMNS, rows)],
        )
    )
    report.sections.append(_worst_kinds(evidence))
    report.sections.append(_worst_examples(evidence))
    report.sections.extend(_details(evidence))
    report.sections.append(_not_measured(evidence))
    report.notes.append(
        "Figures are computed by the same code as the study reports (judge reliability, "
        "judge vs human, adversarial search) from this subject's runs only. D has no interval: "
        "it is a transformed p-value (its own measure of uncertainty); see the per-kind table."
    )
    return report


def _worst_kinds(evidence: SubjectEvidence) -> Section:
    """Per kind and paradigm, its failure rate, the worst first (the FBI tables re-sorted)."""
    rows: list[list[object]] = []
    for kind in (PartKind.FBI_SINGLE, PartKind.FBI_REFERENCE):
        data, run = evidence.scores(kind), evidence.run(kind)
        if data is None or run is None or not data.perturbed:
            continue
        table = fbi_rates.failure_section(run, data, data.by_kind_dim()).tables[0]
        for slug, _, ability, measure, rate, low, high, n in table.rows:
            bad = (1 - rate) if rate is not None and measure.startswith("success") else rate
            rows.append(
                [
                    slug,
                    ability,
                    PartKind(kind).label,
                    measure,
                    rate,
                    low,
                    high,
                    n,
                    bad,
                    run_link(run),
                ]
            )
    run = evidence.run(PartKind.FBI_PAIRWISE)
    if run is not None:
        for row in fbi_rates.pairwise_section(run).tables[0].rows:
            slug, _, ability, rate, low, high, n = row[:7]
            rows.append(
                [
                    slug,
                    ability,
                    PartKind.FBI_PAIRWISE.label,
                    "failure: not original",
                    rate,
                    low,
                    high,
                    n,
                    rate,
                    run_link(run),
                ]
            )
    rows.sort(key=lambda r: (-_badness(r[8]), str(r[0])))
    return Section(
        "Worst kinds",
        "Each perturbation kind in each paradigm, the worst first: the failure rate (or, for "
        "score-invariant kinds, the share handled right, ranked by its complement), with its "
        "Wilson 95% interval and N.",
        tables=[
            Table(
                "worst_kinds",
                [
                    "kind",
                    "ability",
                    "paradigm",
                    "measure",
                    "rate",
                    "ci_low",
                    "ci_high",
                    "n",
                    "badness",
                    "evidence",
                ],
                rows,
            )
        ],
    )


def _badness(value: object) -> float:
    return float(value) if isinstance(value, int | float) else -1.0


def _worst_examples(evidence: SubjectEvidence) -> Section:
    """The single-answer misses with the largest rise from the original's score."""
    data, run = evidence.scores(PartKind.FBI_SINGLE), evidence.run(PartKind.FBI_SINGLE)
    section = Section(
        "Worst examples",
        f"Up to {EXAMPLES} perturbed texts the judge scored highest relative to their original "
        "(a kind that should lower the score); in the diff, [-text-] was removed from the "
        "original and {+text+} added.",
    )
    if data is None or run is None:
        return section
    misses = []
    for (item, pert, dim), (kind, score) in data.perturbed.items():
        info = data.kinds[kind]
        if (item, dim) in data.original and not info.score_invariant:
            rise = score - data.original[(item, dim)]
            if rise >= 0:
                misses.append(
                    (rise, pert, info.slug, data.dims[dim].label, data.original[(item, dim)], score)
                )
    misses.sort(key=lambda m: (-m[0], m[1]))
    chosen = misses[:EXAMPLES]
    texts = dict(
        (pk, (orig, text))
        for pk, orig, text in Perturbation.objects.filter(
            pk__in=[m[1] for m in chosen]
        ).values_list("pk", "item__original", "text")
    )
    rows = [
        [
            slug,
            label,
            rounded(o),
            rounded(s),
            inline_diff(*texts.get(pert, ("", ""))),
            perturbation_link(pert),
            run_link(run),
        ]
        for _, pert, slug, label, o, s in chosen
    ]
    section.tables.append(
        Table(
            "worst_examples",
            ["kind", "dimension", "original_score", "perturbed_score", "diff", "evidence", "calls"],
            rows,
        )
    )
    return section


def _details(evidence: SubjectEvidence) -> list[Section]:
    """The existing reports' sections, built from this subject's runs."""
    out: list[Section] = []
    data = evidence.scores(PartKind.DISCERNMENT)
    if data is not None and data.perturbed:
        out.append(discernment.section(data, data.by_kind_dim()))
    for kind in (PartKind.FBI_SINGLE, PartKind.FBI_REFERENCE):
        data, run = evidence.scores(kind), evidence.run(kind)
        if data is not None and run is not None and data.perturbed:
            section = fbi_rates.failure_section(run, data, data.by_kind_dim())
            section.title += f": {PartKind(kind).label}"
            out.append(section)
    run = evidence.run(PartKind.FBI_PAIRWISE)
    if run is not None:
        out.append(fbi_rates.pairwise_section(run))
    data = evidence.scores(PartKind.ASPECT_DELTAS)
    run = evidence.run(PartKind.ASPECT_DELTAS)
    if data is not None and run is not None and data.perturbed:
        out.append(deltas_section(data, data.by_kind_dim()))
        out.append(confusion_section(run, data))
    out.extend(_cue_detail(evidence))
    run = evidence.run(PartKind.HUMAN_AGREEMENT)
    if run is not None and run.study is not None:
        out.append(
            judge_human_section([run], {run.pk: judge_means(run)}, rating_sources(run.study))
        )
    search = evidence.search()
    if search is not None:
        rows = search_finals(Q(search_id=search.pk))
        out.append(asr_section(rows))
        out.append(examples_section(rows))
    return out


def _cue_detail(evidence: SubjectEvidence) -> list[Section]:
    cue, baseline = evidence.run(PartKind.MISLEADING_CUE), cue_baseline(evidence)
    if cue is None or baseline is None:
        return []
    means = {cue.pk: judge_means(cue), baseline.pk: judge_means(baseline)}
    rows = match_rows(cue, baseline, means)
    return [
        Section(
            "Misleading cue",
            f"Per criterion, the share of texts scored the same under the misleading cue (run "
            f"{cue.pk}) as without it (run {baseline.pk}); Wilson 95% interval; n: texts.",
            tables=[
                Table(
                    "misleading_match",
                    [
                        "judge",
                        "misleading_run",
                        "baseline_run",
                        "criterion",
                        "match_share",
                        "ci_low",
                        "ci_high",
                        "n",
                    ],
                    rows,
                )
            ],
        )
    ]


def _not_measured(evidence: SubjectEvidence) -> Section:
    rows = [[PartKind(k).label, why] for k in PartKind.values if (why := evidence.missing(k))]
    return Section(
        "Parts not measured",
        "Parts of the battery that give no figure on this card, and why.",
        tables=[Table("not_measured", ["part", "reason"], rows)],
    )
