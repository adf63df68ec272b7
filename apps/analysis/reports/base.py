"""What a report is: titled sections of tables (rows of plain values) and figures (PNG).

A report is plain data, so it can be cached as JSON and rendered as a page, a CSV, a JSON
download or one self-contained HTML file.
"""

from __future__ import annotations

import io
import math
from dataclasses import asdict, dataclass, field
from typing import Any

from apps.csv_cells import safe_writer


@dataclass
class Table:
    name: str
    columns: list[str]
    rows: list[list[Any]]
    caption: str = ""


@dataclass
class Figure:
    name: str
    title: str
    png_base64: str
    caption: str = ""


@dataclass
class Section:
    title: str
    text: str = ""
    tables: list[Table] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)


@dataclass
class Report:
    name: str
    title: str
    study: str
    sections: list[Section] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: What a reader must not miss (e.g. a copied rater), shown above everything else.
    warnings: list[str] = field(default_factory=list)
    #: A card's figures unit by unit ({figure key: [[unit key, value], ...]}), for the
    #: paired tests against a saved card (docs/cards.md, "A regression gate"); not shown.
    units: dict[str, list[list[Any]]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return _clean(asdict(self))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Report:
        sections = [
            Section(
                title=s["title"],
                text=s.get("text", ""),
                tables=[Table(**t) for t in s.get("tables", [])],
                figures=[Figure(**f) for f in s.get("figures", [])],
            )
            for s in data.get("sections", [])
        ]
        return cls(
            data["name"],
            data["title"],
            data["study"],
            sections,
            data.get("notes", []),
            data.get("warnings", []),
            data.get("units", {}),
        )

    def tables(self) -> list[Table]:
        return [t for s in self.sections for t in s.tables]

    def table_csv(self, name: str | None = None) -> str:
        """One table as CSV, or every table stacked with a leading `table` column."""
        buffer = io.StringIO()
        writer = safe_writer(buffer)
        chosen = [t for t in self.tables() if name in (None, t.name)]
        if name is not None:
            for table in chosen:
                writer.writerow(table.columns)
                writer.writerows(table.rows)
            return buffer.getvalue()
        for table in chosen:
            writer.writerow(["table", *table.columns])
            writer.writerows([table.name, *row] for row in table.rows)
            writer.writerow([])
        return buffer.getvalue()


def _clean(value: Any) -> Any:
    """JSON-safe: NaN and infinities become None."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value


def rounded(value: float | None, digits: int = 4) -> float | None:
    if value is None or not math.isfinite(value):
        return None
    return round(float(value), digits)


def significant(value: float | None, digits: int = 3) -> float | None:
    """``value`` to ``digits`` significant figures, for p-values: 3.1e-07 stays 3.1e-07
    where rounding to decimals would show 0.0."""
    if value is None or not math.isfinite(value):
        return None
    return float(f"{float(value):.{digits}g}")
