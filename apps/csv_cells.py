"""CSV cells a spreadsheet cannot run: every CSV the app writes goes through `safe_writer`.

A text cell starting with `=`, `+`, `-`, `@`, a tab or a carriage return is read as a formula by
spreadsheets (CSV injection, see OWASP). Such a cell is written with a leading `'`, which
spreadsheets hide and treat as "this is text". Plain numbers (`-0.25`, `+3`, `-1e-05`) are left
as they are: they cannot be formulas, and reports must stay numeric. The dataset CSV importer
undoes the prefix (`unescape_cell`), so an export imports back unchanged (docs/formats.md).

Kept outside every app (no Django import) so that any layer may use it.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable
from typing import Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
PLAIN_NUMBER = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")


def safe_cell(value: Any) -> Any:
    """The value, or its text with a leading `'` if a spreadsheet would run it."""
    if value is None or isinstance(value, int | float):
        return value
    text = str(value)
    if text.startswith(FORMULA_STARTS) and not PLAIN_NUMBER.fullmatch(text):
        return "'" + text
    return text


def unescape_cell(text: str) -> str:
    """Undo `safe_cell` on a cell read back from one of our exports."""
    if text[:1] == "'" and text[1:2] and text[1:].startswith(FORMULA_STARTS):
        return text[1:]
    return text


class SafeWriter:
    """`csv.writer` whose cells pass through `safe_cell`."""

    def __init__(self, handle: Any, **options: Any):
        self._writer = csv.writer(handle, **options)

    def writerow(self, row: Iterable[Any]) -> Any:
        return self._writer.writerow([safe_cell(v) for v in row])

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        for row in rows:
            self.writerow(row)


class SafeDictWriter(csv.DictWriter):
    """`csv.DictWriter` whose cells (and header) pass through `safe_cell`."""

    def __init__(self, handle: Any, fieldnames: list[str]):
        super().__init__(handle, fieldnames)
        self.writer = SafeWriter(handle)  # type: ignore[assignment]


def safe_writer(handle: Any, **options: Any) -> SafeWriter:
    return SafeWriter(handle, **options)
