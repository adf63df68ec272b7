"""An audit's report cards as test results, for the files CI tools read (docs/audit.md, "In
CI"): each verdict line of each card, and each figure tested against a saved card, becomes one
case that passed, failed, was skipped or met an error. ``junit`` and ``promptfoo_results``
write these cases; neither decides anything of its own.

- passed:  the verdict is the figure's good word (detects, order-stable, robust...)
- failed:  its bad word (misses, order-biased, fooled...), or a figure significantly worse
  than the saved card
- skipped: the card could not decide: unstable (the interval spans the threshold), too few
  texts to tell, not measured (the part was skipped, not run or not finished, or the data hold
  nothing of its kind)
- error:   no result (the part ran and nothing it produced could be read), or the card could
  not be built
"""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal

from django.utils.text import slugify

from apps.analysis.cards.baseline import BaselineResult, GatedFigure
from apps.analysis.cards.comparison import subjects_of
from apps.analysis.cards.snapshots import audit_fingerprint, card_get
from apps.analysis.cards.verdict_lines import ALL, VERDICT_COLUMNS, part_of
from apps.analysis.cards.verdicts import NO_RESULT
from apps.analysis.definitions import DEFINITIONS
from apps.analysis.formatting import counted_text, format_value
from apps.judging.models import JudgeRun
from apps.judging.models.audit import AuditSubject, JudgeAudit

logger = logging.getLogger(__name__)
PASSED, FAILED, SKIPPED, ERROR = "passed", "failed", "skipped", "error"
#: The part named by a case that tests a figure against the saved card.
BASELINE = "baseline"
AGAINST_SAVED = "against the saved card"
#: What a case keeps of its verdict line (or paired test) besides its words.
FIGURE_FIELDS = ("value", "ci_low", "ci_high", "n", "texts", "threshold", "evidence")


@dataclass(frozen=True)
class Case:
    """One verdict line (or one figure against the saved card), decided."""

    key: str
    figure: str
    scope: str
    #: The audit part the figure comes from (a PartKind value), "baseline", or "" (all).
    part: str
    verdict: str
    outcome: str
    #: The line in one plain sentence: verdict, figure, value, 95% interval, N and why.
    sentence: str
    figures: dict[str, object] = field(default_factory=dict)

    @property
    def name(self) -> str:
        if self.part == BASELINE:
            return f"{AGAINST_SAVED}: {self.figure}"
        return f"{self.figure} ({self.scope})"


@dataclass(frozen=True)
class RunTotals:
    """What a subject's runs spent (each run once, baselines too)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_calls: int = 0
    http_requests: int = 0
    #: From the first run's start to the last one's end; None unless every run has both.
    seconds: float | None = None

    @classmethod
    def of(cls, runs: list[JudgeRun]) -> RunTotals:
        starts = [r.started_at for r in runs if r.started_at]
        ends = [r.finished_at for r in runs if r.finished_at]
        timed = bool(runs) and len(starts) == len(ends) == len(runs)
        return cls(
            sum(r.prompt_tokens for r in runs),
            sum(r.completion_tokens for r in runs),
            sum(r.cached for r in runs),
            sum(r.http_requests for r in runs),
            (max(ends) - min(starts)).total_seconds() if timed else None,
        )


@dataclass
class SubjectCases:
    """One audited judge and strategy: its card's cases."""

    id: int
    label: str
    judge_id: int
    judge: str
    strategy: str
    strategy_name: str
    runs: RunTotals
    cost_usd: Decimal | None
    cases: list[Case] = field(default_factory=list)

    @property
    def slug(self) -> str:
        """The subject's name as a JUnit class name segment (never empty)."""
        return slugify(self.label).replace("-", "_") or f"subject_{self.id}"

    def count(self, outcome: str) -> int:
        return sum(1 for c in self.cases if c.outcome == outcome)


@dataclass
class AuditCases:
    id: int
    label: str
    status: str
    #: The study or dataset audited.
    where: str
    timestamp: datetime
    seconds: float | None
    subjects: list[SubjectCases] = field(default_factory=list)

    def count(self, outcome: str) -> int:
        return sum(s.count(outcome) for s in self.subjects)

    @property
    def tests(self) -> int:
        return sum(len(s.cases) for s in self.subjects)


def outcome_of(key: str, verdict: str) -> str:
    """A verdict word as a test outcome (this module's docstring says which and why)."""
    definition = DEFINITIONS.get(key)
    side = definition.side(verdict) if definition is not None else ""
    if side:
        return PASSED if side == "good" else FAILED
    return ERROR if verdict == NO_RESULT else SKIPPED


def audit_cases(
    audit: JudgeAudit,
    *,
    subject: AuditSubject | None = None,
    gate: BaselineResult | None = None,
) -> AuditCases:
    """Every subject's cases (``subject``'s alone when given), each card as its page shows
    it; with ``gate``, each subject's figures tested against the saved card after its lines."""
    fingerprint = audit_fingerprint(audit)
    subjects = [s for s in subjects_of(audit) if subject is None or s.pk == subject.pk]
    totals = _run_totals(audit)
    gated: dict[str, list[GatedFigure]] = defaultdict(list)
    for figure in gate.gated if gate is not None else []:
        gated[figure.subject].append(figure)
    started, ended = audit.started_at, audit.finished_at
    return AuditCases(
        audit.pk,
        str(audit),
        audit.status,
        audit.study.name if audit.study else (audit.dataset.name if audit.dataset else ""),
        ended or started or audit.created_at,
        (ended - started).total_seconds() if started and ended else None,
        [
            _subject_cases(s, fingerprint, totals.get(s.pk, RunTotals()), gated[str(s)])
            for s in subjects
        ],
    )


def _subject_cases(
    subject: AuditSubject, fingerprint: str, runs: RunTotals, gated: list[GatedFigure]
) -> SubjectCases:
    strategy = subject.strategy
    out = SubjectCases(
        subject.pk,
        str(subject),
        subject.judge_id,
        subject.judge.name,
        strategy.slug if strategy else "",
        strategy.name if strategy else "",
        runs,
        subject.judge.cost(runs.prompt_tokens, runs.completion_tokens),
    )
    try:
        card = card_get(subject, fingerprint)
    except Exception as exc:  # as on the card's page: say why, never stop the whole file
        logger.exception("an audit card could not be built")
        out.cases.append(_unbuilt(f"{type(exc).__name__}: {exc}"))
        return out
    table = next((t for t in card.tables() if t.name == "verdict"), None)
    rows = table.rows if table is not None else []
    out.cases.extend(_line_case(dict(zip(VERDICT_COLUMNS, row, strict=True))) for row in rows)
    out.cases.extend(_gated_case(figure) for figure in gated)
    return out


def _line_case(cells: dict[str, object]) -> Case:
    key, verdict = str(cells["key"]), str(cells["verdict"])
    return Case(
        key,
        str(cells["figure"]),
        str(cells["scope"]),
        part_of(key),
        verdict,
        outcome_of(key, verdict),
        _sentence(cells),
        {name: cells[name] for name in FIGURE_FIELDS},
    )


def _sentence(cells: dict[str, object]) -> str:
    """ "misses: Errors missed: … = 0.5, 95% interval 0.325 to 0.675, N = 24; why"."""
    scope = str(cells["scope"])
    figure = str(cells["figure"]) + ("" if scope == ALL else f" ({scope})")
    measured = ""
    if cells["value"] is not None:
        measured = f" = {format_value(cells['value'])}"
        if cells["ci_low"] is not None and cells["ci_high"] is not None:
            low, high = format_value(cells["ci_low"]), format_value(cells["ci_high"])
            measured += f", 95% interval {low} to {high}"
        measured += f", N = {counted_text(cells['n'], cells['texts'])}"
    return f"{cells['verdict']}: {figure}{measured}; {cells['why']}"


def _gated_case(gated: GatedFigure) -> Case:
    cells = gated.cells
    said = "significantly worse than" if gated.regression else "not significantly worse than"
    difference = (
        f"saved − now = {format_value(cells['difference'])}, 95% interval "
        f"{format_value(cells['ci_low'])} to {format_value(cells['ci_high'])}"
    )
    sentence = (
        f"{said} the saved card: {cells['figure']}: {difference}, N = {cells['n']} "
        f"({cells['test']}), p Holm-adjusted = {format_value(cells['p_holm'], p_value=True)}"
    )
    return Case(
        str(cells["key"]),
        str(cells["figure"]),
        AGAINST_SAVED,
        BASELINE,
        "worse than the saved card" if gated.regression else "not worse than the saved card",
        FAILED if gated.regression else PASSED,
        sentence,
        {
            "difference": cells["difference"],
            "ci_low": cells["ci_low"],
            "ci_high": cells["ci_high"],
            "n": cells["n"],
            "test": cells["test"],
            "p_holm": cells["p_holm"],
        },
    )


def _unbuilt(error: str) -> Case:
    sentence = f"the report card could not be built: {error}"
    return Case("card", "Report card", ALL, "", "no result", ERROR, sentence)


def _run_totals(audit: JudgeAudit) -> dict[int, RunTotals]:
    """Each subject's runs (its parts' runs and baselines, each once), summed."""
    runs: dict[int, dict[int, JudgeRun]] = defaultdict(dict)
    for part in audit.parts_all():
        for run in (part.run, part.baseline):
            if run is not None:
                runs[part.subject_id][run.pk] = run
    return {pk: RunTotals.of(list(found.values())) for pk, found in runs.items()}
