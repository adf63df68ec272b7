"""Reading text files strictly: bad encoding is an error naming the line, never a guess."""

from __future__ import annotations

import codecs
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from apps.inputs.problems import ImportFailed, ImportProblem

CHUNK = 1 << 20


def read_utf8(path: Path, label: str | None = None) -> str:
    """The file's text as UTF-8 (a BOM is dropped); raise ImportFailed naming the bad line."""
    with open_utf8(path, label) as handle:
        return handle.read()


@contextmanager
def open_utf8(path: Path, label: str | None = None) -> Iterator[TextIO]:
    """The file as a stream of UTF-8 text (a BOM dropped, newlines kept as they are).

    Reading it raises ImportFailed naming the line of the first byte that is not UTF-8.
    """
    name = label or path.name
    try:
        handle = path.open(encoding="utf-8-sig", newline="")
    except OSError as exc:
        raise ImportFailed([ImportProblem(name, f"cannot read file: {exc.strerror}")]) from exc
    try:
        with handle:
            yield handle
    except UnicodeDecodeError as exc:
        raise ImportFailed([_decode_problem(path, name)]) from exc


def _decode_problem(path: Path, name: str) -> ImportProblem:
    """Find the first bad byte again, a chunk at a time, to name its line."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset, line = 0, 1
    with path.open("rb") as raw:
        while chunk := raw.read(CHUNK):
            pending = len(decoder.getstate()[0])
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError as exc:
                start = max(exc.start - pending, 0)
                bad = chunk[start : start + 1] if start < len(chunk) else b""
                line += chunk[:start].count(b"\n")
                return ImportProblem(
                    name,
                    f"not valid UTF-8 at line {line}, byte {offset + start} ({bad!r}); "
                    "save the file as UTF-8",
                )
            offset += len(chunk)
            line += chunk.count(b"\n")
    return ImportProblem(name, "not valid UTF-8; save the file as UTF-8")
