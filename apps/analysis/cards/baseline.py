"""A regression gate (docs/cards.md, "A regression gate"): an audit's cards compared with
saved ones, figure by figure, with the paired tests of judges side by side on the units both
measured, the whole family corrected with Holm. A figure is a regression when it is
significantly worse now than in the saved card.

A saved card is what the card's JSON download, the audit's JSON (``judge_audit --json``, the
page's "the whole audit as JSON") or ``GET /api/v1/judge-audits/{id}/cards/`` hold: each card
keeps its figures unit by unit (``units``). Units are matched by their keys (the texts, pairs
and calls of this Discern database), so compare audits of the same data.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from apps.analysis.cards.comparison import TEST_COLUMNS, paired_tests, subjects_of
from apps.analysis.cards.evidence import SubjectEvidence
from apps.analysis.cards.units import MEASURES, Units, measure_units
from apps.analysis.reports.base import Report, Section
from apps.analysis.reports.meanings import with_meanings
from apps.judging.models.audit import JudgeAudit

SAVED, NOW = "saved", "now"


class BaselineError(ValueError):
    """The saved file is not a card or an audit of cards (the message says why)."""


@dataclass(frozen=True)
class GatedFigure:
    """One figure of one subject tested against its saved card: the paired test's row by
    column (``TEST_COLUMNS``), and whether it is a regression (significantly worse now)."""

    subject: str
    cells: dict[str, object]
    regression: bool

    @property
    def named(self) -> str:
        return f"{self.subject}: {self.cells['figure']}"


@dataclass
class BaselineResult:
    report: Report
    #: "subject: figure" for every figure significantly worse now.
    regressions: list[str] = field(default_factory=list)
    compared: int = 0
    #: Every figure tested, in the table's order.
    gated: list[GatedFigure] = field(default_factory=list)


def saved_cards(data: Any) -> dict[str, dict[str, Units]]:
    """Subject label → figure key → units, from a saved audit JSON or one card's JSON."""
    if not isinstance(data, dict):
        raise BaselineError("expected a JSON object: a saved card or audit")
    if isinstance(data.get("cards"), list):
        found = {}
        for entry in data["cards"]:
            label = str((entry.get("subject") or {}).get("label", ""))
            found[label] = _units(entry.get("card") or {}, label)
        return found
    if data.get("name") == "audit-card":
        label = str(data.get("title", "")).removeprefix("Report card: ")
        return {label: _units(data, label)}
    raise BaselineError("neither a report card (name: audit-card) nor an audit (cards: [...])")


def _units(card: dict[str, Any], label: str) -> dict[str, Units]:
    units = card.get("units")
    if not isinstance(units, dict) or not units:
        raise BaselineError(
            f"the saved card of {label or 'a subject'} holds no units (saved before cards "
            "kept them: save it again)"
        )
    try:
        return {
            key: {str(k): float(v) for k, v in units.get(key, [])}
            for key in (m.key for m in MEASURES)
        }
    except (TypeError, ValueError) as exc:
        raise BaselineError(
            f"the units of {label or 'a card'} are not [key, number] pairs"
        ) from exc


def baseline_compare(audit: JudgeAudit, data: Any) -> BaselineResult:
    """Each subject of ``audit`` against its saved card (matched by label; one saved card and
    one subject are matched whatever their labels)."""
    saved = saved_cards(data)
    subjects = subjects_of(audit)
    pairs = []
    for subject in subjects:
        label = str(subject)
        old = saved.get(label)
        if old is None and len(saved) == 1 and len(subjects) == 1:
            old = next(iter(saved.values()))
        if old is None:
            continue
        now: dict[str, Units] = {
            k: {str(u): v for u, v in units.items()} for k, units in _current(subject).items()
        }
        pairs.append((f"{label} ({SAVED})", old, f"{label} ({NOW})", now))
    if not pairs:
        raise BaselineError(
            "no subject of this audit has a saved card: saved "
            + ", ".join(sorted(saved))
            + "; here "
            + ", ".join(str(s) for s in subjects)
        )
    table = paired_tests(pairs)
    report = Report("audit-baseline", f"Compared with the saved cards: {audit}", audit.label)
    report.sections.append(
        Section(
            "Against the saved cards",
            "Each figure now against the saved card on the units both measured (McNemar's "
            "exact test on the same texts, pairs and calls; a paired bootstrap on means; "
            "Wilcoxon on per-kind discernment), Holm-corrected over the table. significant: "
            "p, Holm-adjusted < 0.05; worse names the side the figure got worse on.",
            tables=[table],
        )
    )
    gated = [_gated(row) for row in table.rows]
    regressions = [g.named for g in gated if g.regression]
    return BaselineResult(with_meanings(report), regressions, len(table.rows), gated)


def _gated(row: list[object]) -> GatedFigure:
    """A paired test's row, the saved card first and the subject now second."""
    cells = dict(zip(TEST_COLUMNS, row, strict=True))
    subject = str(cells["second"]).removesuffix(f" ({NOW})")
    return GatedFigure(subject, cells, str(cells["worse"]).endswith(f"({NOW})"))


def _current(subject) -> dict[str, Units]:
    return measure_units(SubjectEvidence.load(subject))
