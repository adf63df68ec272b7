"""What the figures of a report mean, as the report's last section (docs/figures.md): every
figure a table of the report shows (as a column, or named in a "key" column), with its
definition, so a download carries the meaning of its numbers with it."""

from __future__ import annotations

from apps.analysis.definitions import DEFINITIONS
from apps.analysis.reports.base import Report, Section, Table

TITLE = "What the figures mean"
COLUMNS = ["key", "figure", "better", "formula", "unit", "population", "interval", "threshold"]


def figure_keys(report: Report) -> list[str]:
    """The defined figures a report's tables show, in the order they first appear."""
    found: dict[str, None] = {}
    for table in report.tables():
        found |= dict.fromkeys(c for c in table.columns if c in DEFINITIONS)
        if "key" in table.columns:
            at = table.columns.index("key")
            found |= dict.fromkeys(str(r[at]) for r in table.rows if str(r[at]) in DEFINITIONS)
    return list(found)


def with_meanings(report: Report) -> Report:
    """The report with its "What the figures mean" section last (replacing an older one)."""
    report.sections = [s for s in report.sections if s.title != TITLE]
    rows = []
    for key in figure_keys(report):
        d = DEFINITIONS[key]
        rows.append(
            [key, d.name, d.direction, d.formula, d.unit, d.population, d.interval, d.threshold]
        )
    if rows:
        text = "Each figure's definition, the same on every page and download."
        report.sections.append(Section(TITLE, text, tables=[Table("definitions", COLUMNS, rows)]))
    return report
