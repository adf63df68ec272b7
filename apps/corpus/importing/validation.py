"""Checks on every record before anything is written."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from django.conf import settings

from apps.corpus.importing.records import ItemRecord
from apps.inputs.fields import strings_problem, text_problem
from apps.inputs.problems import ImportProblem

MAX_ID_CHARS = 200


def validate_records(
    records: Iterable[ItemRecord], *, kinds: set[str], tasks: set[str], default_task: str
) -> list[ImportProblem]:
    """Every problem in the records: empty or oversized text, unknown kind or task, bad ids."""
    limit = settings.DISCERN_MAX_FIELD_CHARS
    problems: list[ImportProblem] = []
    for record in records:
        problems.extend(_item_problems(record, tasks, default_task, limit))
        problems.extend(_perturbation_problems(record, kinds, limit))
    return problems


def _item_problems(record: ItemRecord, tasks: set[str], default_task: str, limit: int):
    file, row = record.file, record.row
    if not record.external_id:
        yield ImportProblem(file=file, row=row, field="id", message="empty id")
    elif len(record.external_id) > MAX_ID_CHARS:
        yield ImportProblem(
            file=file, row=row, field="id", message=f"longer than {MAX_ID_CHARS} characters"
        )
    if not record.original.strip():
        yield ImportProblem(file=file, row=row, field="original", message="empty text")
    texts = {"id": record.external_id, "original": record.original, "source": record.source}
    yield from _text_problems(file, row, {**texts, "task": record.task})
    if problem := strings_problem(record.metadata):
        yield ImportProblem(file=file, row=row, field="metadata", message=problem)
    for field in ("original", "source"):
        size = len(getattr(record, field))
        if size > limit:
            yield ImportProblem(
                file=file,
                row=row,
                field=field,
                message=f"{size:,} characters, over the limit of {limit:,}",
            )
    task = record.task or default_task
    if task and task not in tasks:
        yield ImportProblem(file=file, row=row, field="task", message=f"unknown task '{task}'")


def _perturbation_problems(record: ItemRecord, kinds: set[str], limit: int):
    seen: set[tuple[str, str]] = set()
    for p in record.perturbations:
        file, row = record.file, p.row or record.row
        if p.kind not in kinds:
            yield ImportProblem(
                file=file,
                row=row,
                field="kind",
                message=f"unknown perturbation kind '{p.kind}' (see /api/v1/kinds/)",
            )
        if not p.text.strip():
            yield ImportProblem(file=file, row=row, field="perturbed", message="empty text")
        if len(p.external_id) > MAX_ID_CHARS:
            yield ImportProblem(
                file=file,
                row=row,
                field="perturbation_id",
                message=f"longer than {MAX_ID_CHARS} characters",
            )
        fields = {"perturbed": p.text, "explanation": p.explanation}
        yield from _text_problems(file, row, {**fields, "perturbation_id": p.external_id})
        for field, value in (("perturbed", p.text), ("explanation", p.explanation)):
            if len(value) > limit:
                yield ImportProblem(
                    file=file,
                    row=row,
                    field=field,
                    message=f"{len(value):,} characters, over the limit of {limit:,}",
                )
        key = (p.kind, perturbation_key(p.external_id, p.text))
        if key in seen:
            yield ImportProblem(
                file=file,
                row=row,
                field="perturbation_id",
                message=f"duplicate perturbation of kind '{p.kind}' for this item",
            )
        seen.add(key)


def _text_problems(file: str, row: int | None, fields: dict[str, str]):
    for field, value in fields.items():
        if problem := text_problem(value):
            yield ImportProblem(file=file, row=row, field=field, message=problem)


def perturbation_key(external_id: str, text: str) -> str:
    """A stable id for a perturbation: the given one, else a hash of its text."""
    digest = hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()
    return external_id or "sha1:" + digest[:20]
