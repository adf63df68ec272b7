"""The report card of one judge and strategy (docs/cards.md): the verdict first (one plain
word per question, with the figure, interval and N behind it), the worst kinds with an
example each, one line per figure with its N, 95% interval and evidence, then the detail the
study reports compute from the subject's runs; a part that was skipped or holds no data says
why.
"""

from __future__ import annotations

from django.db.models import Q

from apps.analysis.cards import lines as card_lines
from apps.analysis.cards.evidence import SubjectEvidence
from apps.analysis.cards.examples import worst_examples, worst_kinds
from apps.analysis.cards.lines import LINE_COLUMNS
from apps.analysis.cards.units import Units, cue_baseline, discernment_section, measure_units
from apps.analysis.cards.verdict_lines import VERDICT_COLUMNS, verdict_rows
from apps.analysis.reports import fbi_rates
from apps.analysis.reports.adversarial import asr_section, examples_section, search_finals
from apps.analysis.reports.base import Report, Section, Table
from apps.analysis.reports.judge_reliability import confusion_section, deltas_section
from apps.analysis.reports.judge_vs_human import judge_human_section, judge_means, rating_sources
from apps.analysis.reports.meanings import with_meanings
from apps.analysis.reports.prompting_strategies import match_rows
from apps.analysis.selectors import verdict_thresholds
from apps.judging.models.audit import AuditSubject, PartKind


def build_card(subject: AuditSubject, units: dict[str, Units] | None = None) -> Report:
    evidence = SubjectEvidence.load(subject)
    audit = subject.audit
    where = audit.study.name if audit.study else (audit.dataset.name if audit.dataset else "")
    report = Report("audit-card", f"Report card: {evidence.label}", where)
    units = units if units is not None else measure_units(evidence)
    rows = card_lines.lines(evidence, units)
    thresholds = verdict_thresholds(audit.study)
    report.sections.append(
        Section(
            "Verdict",
            "Can this judge be trusted? Each line answers one question from the figure, its "
            "95% interval and N: detects (or the figure's own good word), misses (or its bad "
            "word), unstable when the interval spans the threshold, too few texts to tell when "
            "even a perfect judge could not pass on these texts (a proven miss stays a miss), "
            "not measured or no result "
            "with the reason. Thresholds are "
            + ("this study's (its page sets them)." if audit.study else "the defaults."),
            tables=[
                Table("verdict", VERDICT_COLUMNS, verdict_rows(evidence, units, rows, thresholds))
            ],
        )
    )
    report.sections.append(worst_examples(evidence, units))
    report.sections.append(
        Section(
            "Figures",
            "One line per figure: its value, 95% interval and N, with the texts the interval "
            "counts (each once, however many criteria it was scored on) and a link to the "
            "evidence (the run's calls, the search).",
            tables=[Table("card", LINE_COLUMNS, rows)],
        )
    )
    report.sections.append(worst_kinds(evidence, units))
    report.sections.extend(_details(evidence))
    report.sections.append(_not_measured(evidence))
    report.units = {key: [[str(k), v] for k, v in values.items()] for key, values in units.items()}
    return with_meanings(report)


def _details(evidence: SubjectEvidence) -> list[Section]:
    """The existing reports' sections, built from this subject's runs."""
    out: list[Section] = []
    data = evidence.scores(PartKind.DISCERNMENT)
    if data is not None and data.perturbed:
        out.append(discernment_section(evidence))
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
