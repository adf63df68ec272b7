"""Readers for the three input formats. Each returns records plus the problems it saw."""

from __future__ import annotations

import csv
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from apps.corpus.importing.records import ItemRecord, PerturbationRecord
from apps.csv_cells import unescape_cell
from apps.inputs.fields import BadJson, json_loads
from apps.inputs.problems import ImportFailed, ImportProblem
from apps.inputs.text_files import open_utf8

Read = tuple[list[ItemRecord], list[ImportProblem]]

CSV_REQUIRED = ("id", "original")
CSV_OPTIONAL = ("source", "task", "metadata", "kind", "perturbed", "explanation", "perturbation_id")
FBI_COLUMNS = ("cdx", "question", "og", "perturbed_gpt4")
FBI_TASKS = {
    "long-form": "long-form-writing",
    "factual": "factual-qa",
    "instruction-following": "instruction-following",
    "reasoning": "reasoning",
}
# The score-invariant file mixes abilities; its ids start with these prefixes.
FBI_ID_PREFIXES = {
    "lf": "long-form",
    "factual": "factual",
    "if": "instruction-following",
    "reasoning": "reasoning",
}

csv.field_size_limit(sys.maxsize)  # field sizes are checked by validation, with a clear message


def read_csv(path: Path, delimiter: str = ",") -> Read:
    """One row per item, optionally with one perturbation; an item may span several rows."""
    with open_utf8(path) as handle:
        return _read_csv_rows(path.name, handle, delimiter)


def _read_csv_rows(name: str, handle: TextIO, delimiter: str) -> Read:
    # strict: a quote left open is an error, never two rows silently merged into one text
    reader = csv.DictReader(handle, delimiter=delimiter, strict=True)
    try:
        header = [h.strip() for h in reader.fieldnames or []]
    except csv.Error as exc:
        raise ImportFailed([_quote_problem(name, 1, 1, exc)]) from exc
    missing = [c for c in CSV_REQUIRED if c not in header]
    if missing:
        found = ", ".join(header) or "nothing"
        raise ImportFailed(
            [
                ImportProblem(
                    name, f"missing column(s) {', '.join(missing)} (header has: {found})", row=1
                )
            ]
        )
    reader.fieldnames = header
    records: list[ItemRecord] = []
    problems: list[ImportProblem] = []
    index, line = 1, reader.line_num
    try:
        for index, raw in enumerate(reader, start=2):
            line = reader.line_num
            if None in raw or any(v is None for v in raw.values()):
                problems.append(
                    ImportProblem(
                        name, f"{_count(raw)} fields where the header has {len(header)}", row=index
                    )
                )
                continue
            records.append(_csv_record(name, index, raw, problems))
    except csv.Error as exc:
        problems.append(_quote_problem(name, index + 1, line + 1, exc))
    return _merge_rows(records, problems), problems


def _quote_problem(name: str, row: int, line: int, exc: csv.Error) -> ImportProblem:
    return ImportProblem(
        name,
        f"a quoted field starting on line {line} is not closed properly ({exc}); "
        'double a quote inside a quoted field ("")',
        row=row,
    )


def _count(raw: dict[Any, Any]) -> int:
    extra = raw.get(None) or []
    return sum(1 for k, v in raw.items() if k is not None and v is not None) + len(extra)


def _csv_record(
    name: str, row: int, raw: dict[str, str], problems: list[ImportProblem]
) -> ItemRecord:
    raw = {k: unescape_cell(v) for k, v in raw.items()}  # our CSV exports prefix formulas
    metadata: dict[str, Any] = {}
    if raw.get("metadata", "").strip():
        metadata = _json_object(raw["metadata"], name, row, "metadata", problems)
    record = ItemRecord(
        file=name,
        row=row,
        external_id=raw["id"].strip(),
        original=raw["original"],
        source=raw.get("source", ""),
        task=raw.get("task", "").strip(),
        metadata=metadata,
    )
    if raw.get("kind", "").strip() or raw.get("perturbed", ""):
        record.perturbations.append(
            PerturbationRecord(
                kind=raw.get("kind", "").strip(),
                text=raw.get("perturbed", ""),
                explanation=raw.get("explanation", ""),
                external_id=raw.get("perturbation_id", "").strip(),
                row=row,
            )
        )
    return record


def _json_object(text: str, name: str, row: int, field: str, problems: list[ImportProblem]):
    try:
        value = json_loads(text)
    except BadJson as exc:
        problems.append(ImportProblem(name, str(exc), row=row, field=field))
        return {}
    if not isinstance(value, dict):
        problems.append(ImportProblem(name, "must be a JSON object", row=row, field=field))
        return {}
    return value


def _merge_rows(records: list[ItemRecord], problems: list[ImportProblem]) -> list[ItemRecord]:
    """Rows sharing an id are one item with several perturbations, if they agree on the item."""
    merged: dict[str, ItemRecord] = {}
    for record in records:
        first = merged.get(record.external_id)
        if first is None:
            merged[record.external_id] = record
        elif not record.perturbations or not first.same_item_as(record):
            problems.append(
                ImportProblem(
                    record.file,
                    f"duplicate id '{record.external_id}' (first at row {first.row}) "
                    "with a different item",
                    row=record.row,
                    field="id",
                )
            )
        else:
            first.perturbations.extend(record.perturbations)
    return list(merged.values())


def read_jsonl(path: Path) -> Read:
    """One JSON object per line: id, original, source, task, metadata, perturbations[]."""
    name = path.name
    records: list[ItemRecord] = []
    problems: list[ImportProblem] = []
    seen: dict[str, int] = {}
    with open_utf8(path) as handle:
        for line_no, line in enumerate(_lines(handle), start=1):
            record = _jsonl_line(name, line_no, line, problems)
            if record is None:
                continue
            if record.external_id in seen:
                problems.append(
                    ImportProblem(
                        name,
                        f"duplicate id '{record.external_id}' (first at "
                        f"row {seen[record.external_id]})",
                        line_no,
                        "id",
                    )
                )
                continue
            seen[record.external_id] = line_no
            records.append(record)
    return records, problems


def _lines(handle: TextIO) -> Iterator[str]:
    """One line at a time (JSON strings may hold U+2028, so only real line ends count)."""
    for line in handle:
        yield line.rstrip("\r\n")


def _jsonl_line(name: str, line_no: int, line: str, problems: list[ImportProblem]):
    if not line.strip():
        return None
    try:
        obj = json_loads(line, check_strings=False)
    except BadJson as exc:
        problems.append(ImportProblem(name, str(exc), row=line_no))
        return None
    return _jsonl_record(name, line_no, obj, problems)


def _jsonl_record(
    name: str, row: int, obj: Any, problems: list[ImportProblem]
) -> ItemRecord | None:
    if not isinstance(obj, dict):
        problems.append(ImportProblem(name, "each line must be a JSON object", row=row))
        return None
    bad = [f for f in ("original", "source", "task") if f in obj and not _text(obj[f])]
    if "id" in obj and not _scalar(obj["id"]):
        bad.insert(0, "id")
    for field in bad:
        problems.append(ImportProblem(name, "must be a string", row=row, field=field))
    metadata = obj.get("metadata") or {}
    if not isinstance(metadata, dict):
        problems.append(ImportProblem(name, "must be a JSON object", row=row, field="metadata"))
        metadata = {}
    perturbations = obj.get("perturbations") or []
    if not isinstance(perturbations, list):
        problems.append(ImportProblem(name, "must be a list", row=row, field="perturbations"))
        perturbations = []
    if bad:
        return None
    record = ItemRecord(
        file=name,
        row=row,
        external_id=str(obj.get("id", "")).strip(),
        original=obj.get("original") or "",
        source=obj.get("source") or "",
        task=(obj.get("task") or "").strip(),
        metadata=metadata,
    )
    for i, p in enumerate(perturbations):
        if not isinstance(p, dict) or not all(_text(p.get(f)) for f in ("kind", "text")):
            problems.append(
                ImportProblem(
                    name, "needs string fields kind and text", row=row, field=f"perturbations[{i}]"
                )
            )
            continue
        if not _text(p.get("explanation") or "") or not _scalar(p.get("id") or ""):
            problems.append(
                ImportProblem(
                    name, "id and explanation must be strings", row=row, field=f"perturbations[{i}]"
                )
            )
            continue
        record.perturbations.append(
            PerturbationRecord(
                kind=p["kind"].strip(),
                text=p["text"],
                explanation=str(p.get("explanation") or ""),
                external_id=str(p.get("id") or "").strip(),
                row=row,
            )
        )
    return record


def _scalar(value: Any) -> bool:
    """An id may be written as a number; texts must be strings."""
    return isinstance(value, str | int) and not isinstance(value, bool)


def _text(value: Any) -> bool:
    return isinstance(value, str)


def read_fbi(folder: Path) -> Read:
    """A folder laid out like the FBI release: <ability>/<kind>.tsv, one perturbation a row."""
    if not folder.is_dir():
        raise ImportFailed([ImportProblem(folder.name, "not a folder of <ability>/<kind>.tsv")])
    files = sorted(folder.glob("*/*.tsv"))
    if not files:
        raise ImportFailed([ImportProblem(folder.name, "no <ability>/<kind>.tsv files found")])
    records: list[ItemRecord] = []
    problems: list[ImportProblem] = []
    for path in files:
        records.extend(_fbi_file(path, problems))
    return records, problems


def _fbi_file(path: Path, problems: list[ImportProblem]) -> list[ItemRecord]:
    label = f"{path.parent.name}/{path.name}"
    with open_utf8(path, label) as handle:
        reader = csv.DictReader(handle, delimiter="\t", strict=True)
        where = [1, 1]  # the row and line where the last good row ended
        try:
            return _fbi_rows(path, label, reader, problems, where)
        except csv.Error as exc:
            problems.append(_quote_problem(label, where[0] + 1, where[1] + 1, exc))
            return []


def _fbi_rows(path, label, reader, problems: list[ImportProblem], where) -> list[ItemRecord]:
    missing = [c for c in FBI_COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        problems.append(ImportProblem(label, f"missing column(s) {', '.join(missing)}", row=1))
        return []
    stem, ability = path.stem, path.parent.name
    kind = "fbi-" + stem.replace("_", "-")
    out: list[ItemRecord] = []
    seen: dict[str, int] = {}
    for row, raw in enumerate(reader, start=2):
        where[:] = [row, reader.line_num]
        cdx = (raw.get("cdx") or "").strip()
        if cdx in seen:
            problems.append(
                ImportProblem(
                    label, f"duplicate cdx '{cdx}' (first at row {seen[cdx]})", row=row, field="cdx"
                )
            )
            continue
        seen[cdx] = row
        item_ability = FBI_ID_PREFIXES.get(cdx.split("-")[0], ability)
        out.append(
            ItemRecord(
                file=label,
                row=row,
                external_id=f"{stem}:{cdx}",
                original=raw.get("og") or "",
                source=raw.get("question") or "",
                task=FBI_TASKS.get(item_ability, ""),
                metadata={"ability": item_ability, "cdx": cdx, "file": label},
                perturbations=[
                    PerturbationRecord(
                        kind=kind, text=raw.get("perturbed_gpt4") or "", external_id=cdx, row=row
                    )
                ],
            )
        )
    return out
