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
import io
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
CHUNK_CHARS = 64_000
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


def csv_lines(columns: Sequence[str], rows: Iterable[Mapping[str, Any]]) -> Iterator[str]:
    """A header and one line per row, streamed in chunks, for downloads of records: a missing
    key or None is an empty cell, a list or dict its JSON, every cell through `safe_cell`."""
    buffer = io.StringIO()
    writer = safe_writer(buffer)
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_record_cell(row.get(column)) for column in columns])
        if buffer.tell() > CHUNK_CHARS:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
    yield buffer.getvalue()


def _record_cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    return value
