"""Readers for the three input formats. Each returns records plus the problems it saw."""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path
from typing import Any

from apps.corpus.importing.problems import ImportFailed, ImportProblem
from apps.corpus.importing.records import ItemRecord, PerturbationRecord
from apps.corpus.importing.text_files import read_utf8

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
    name = path.name
    reader = csv.DictReader(io.StringIO(read_utf8(path), newline=""), delimiter=delimiter)
    header = [h.strip() for h in reader.fieldnames or []]
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
    try:
        for index, raw in enumerate(reader, start=2):
            if None in raw or any(v is None for v in raw.values()):
                problems.append(
                    ImportProblem(
                        name, f"{_count(raw)} fields where the header has {len(header)}", row=index
                    )
                )
                continue
            records.append(_csv_record(name, index, raw, problems))
    except csv.Error as exc:
        problems.append(ImportProblem(name, f"malformed CSV: {exc}", row=reader.line_num))
    return _merge_rows(records, problems), problems


def _count(raw: dict[Any, Any]) -> int:
    extra = raw.get(None) or []
    return sum(1 for k, v in raw.items() if k is not None and v is not None) + len(extra)


def _csv_record(
    name: str, row: int, raw: dict[str, str], problems: list[ImportProblem]
) -> ItemRecord:
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
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        problems.append(ImportProblem(name, f"not valid JSON ({exc.msg})", row=row, field=field))
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
    for line_no, line in enumerate(read_utf8(path).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(
                ImportProblem(name, f"not valid JSON ({exc.msg}, column {exc.colno})", row=line_no)
            )
            continue
        record = _jsonl_record(name, line_no, obj, problems)
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


def _jsonl_record(
    name: str, row: int, obj: Any, problems: list[ImportProblem]
) -> ItemRecord | None:
    if not isinstance(obj, dict):
        problems.append(ImportProblem(name, "each line must be a JSON object", row=row))
        return None
    bad = [f for f in ("id", "original", "source", "task") if f in obj and not _scalar(obj[f])]
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
        if not isinstance(p, dict) or not all(_scalar(p.get(f)) for f in ("kind", "text")):
            problems.append(
                ImportProblem(
                    name, "needs string fields kind and text", row=row, field=f"perturbations[{i}]"
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
    return isinstance(value, str | int) and not isinstance(value, bool)


def read_fbi(folder: Path) -> Read:
    """A folder laid out like the FBI release: <ability>/<kind>.tsv, one perturbation a row."""
    if not folder.is_dir():
        raise ImportFailed([ImportProblem(str(folder), "not a folder of <ability>/<kind>.tsv")])
    files = sorted(folder.glob("*/*.tsv"))
    if not files:
        raise ImportFailed([ImportProblem(str(folder), "no <ability>/<kind>.tsv files found")])
    records: list[ItemRecord] = []
    problems: list[ImportProblem] = []
    for path in files:
        records.extend(_fbi_file(path, problems))
    return records, problems


def _fbi_file(path: Path, problems: list[ImportProblem]) -> list[ItemRecord]:
    label = f"{path.parent.name}/{path.name}"
    reader = csv.DictReader(io.StringIO(read_utf8(path, label), newline=""), delimiter="\t")
    missing = [c for c in FBI_COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        problems.append(ImportProblem(label, f"missing column(s) {', '.join(missing)}", row=1))
        return []
    stem, ability = path.stem, path.parent.name
    kind = "fbi-" + stem.replace("_", "-")
    out: list[ItemRecord] = []
    seen: dict[str, int] = {}
    for row, raw in enumerate(reader, start=2):
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
