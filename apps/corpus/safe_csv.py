"""CSV writing that spreadsheets cannot run: a text cell starting with = + - @, a tab or a
carriage return gets a leading ' (OWASP's advice on CSV injection), so a spreadsheet shows it
as text instead of evaluating it. Lists and dicts become JSON; None an empty cell.

Use `csv_lines` for every CSV download made of user-supplied text.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
CHUNK_CHARS = 64_000


def safe_cell(value: Any) -> Any:
    """The value as a CSV cell that no spreadsheet evaluates."""
    if value is None:
        return ""
    if isinstance(value, dict | list):
        value = json.dumps(value, ensure_ascii=False)
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def csv_lines(columns: Sequence[str], rows: Iterable[Mapping[str, Any]]) -> Iterator[str]:
    """A header and one line per row (missing keys empty), streamed in chunks."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(columns)
    for row in rows:
        writer.writerow([safe_cell(row.get(column)) for column in columns])
        if buffer.tell() > CHUNK_CHARS:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
    yield buffer.getvalue()
