"""Reading text files strictly: bad encoding is an error naming the line, never a guess."""

from __future__ import annotations

from pathlib import Path

from apps.corpus.importing.problems import ImportFailed, ImportProblem


def read_utf8(path: Path, label: str | None = None) -> str:
    """The file's text as UTF-8 (a BOM is dropped); raise ImportFailed naming the bad line."""
    name = label or path.name
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ImportFailed([ImportProblem(name, f"cannot read file: {exc.strerror}")]) from exc
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        problem = ImportProblem(
            name,
            f"not valid UTF-8 at line {line}, byte {exc.start} "
            f"({data[exc.start : exc.start + 1]!r}); save the file as UTF-8",
        )
        raise ImportFailed([problem]) from exc
