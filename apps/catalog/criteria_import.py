"""`criteria_import`: a criteria file shaped like Hu et al.'s aspect_criteria.json.

The file maps aspect name → {description label → text}. Labels map to description types:
Gold → default, Simplified, Detailed, Term, List → themselves, Selection<n> → literature.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from django.db import transaction
from django.utils.text import slugify

from apps.catalog.models import Aspect, Criterion, DescriptionType
from apps.inputs.fields import BadJson, json_loads, text_problem
from apps.inputs.problems import ImportFailed, ImportProblem
from apps.inputs.text_files import read_utf8

LABELS = {
    "gold": DescriptionType.DEFAULT,
    "default": DescriptionType.DEFAULT,
    "simplified": DescriptionType.SIMPLIFIED,
    "detailed": DescriptionType.DETAILED,
    "term": DescriptionType.TERM,
    "list": DescriptionType.LIST,
}
LITERATURE = re.compile(r"^(selection|literature)\d*$", re.IGNORECASE)
ASPECT_ALIASES = {"overall-quality": "overall"}


def _aspect_slug(name: str) -> str:
    slug = slugify(name.replace("_", " "))
    return ASPECT_ALIASES.get(slug, slug)


@dataclass
class CriteriaSummary:
    created: int = 0
    existing: int = 0


def description_type_for(label: str) -> str | None:
    if LITERATURE.match(label):
        return DescriptionType.LITERATURE
    return LABELS.get(label.lower())


def criteria_import(*, path: Path, source: str = "", scale: tuple[int, int] = (1, 5)):
    """Import every description in the file as a criterion, or nothing if any is wrong."""
    name = path.name
    source = source or slugify(path.stem)
    data = _load(path)
    aspects = {a.slug: a for a in Aspect.objects.all()}
    rows: list[tuple[str, Aspect, str, str]] = []
    problems = _source_problems(name, source)
    for aspect_name, descriptions in data.items():
        slug = _aspect_slug(aspect_name)
        if slug not in aspects:
            message = f"unknown aspect '{aspect_name[:100]}'"
            problems.append(ImportProblem(name, message, field=aspect_name[:100]))
            continue
        if not isinstance(descriptions, dict):
            problems.append(ImportProblem(name, "must map labels to texts", field=aspect_name))
            continue
        for label, text in descriptions.items():
            where = f"{aspect_name}.{label[:100]}"
            problem = _description_problem(label, text, slugify(f"{source}-{slug}-{label}"))
            if problem:
                problems.append(ImportProblem(name, problem, field=where))
            else:
                key = slugify(f"{source}-{slug}-{label}")
                rows.append((key, aspects[slug], description_type_for(label) or "", text))
    problems += _repeated_keys(name, rows)
    if problems:
        raise ImportFailed(problems)
    return _write(rows, source, scale, name)


def _load(path: Path) -> dict:
    try:
        data = json_loads(read_utf8(path), check_strings=False)
    except BadJson as exc:
        raise ImportFailed([ImportProblem(path.name, str(exc), row=exc.line)]) from exc
    if not isinstance(data, dict):
        raise ImportFailed(
            [ImportProblem(path.name, "must be a JSON object: aspect → descriptions")]
        )
    return data


def _source_problems(name: str, source: str) -> list[ImportProblem]:
    limit = Criterion._meta.get_field("source").max_length or 100
    if len(source) > limit:
        return [ImportProblem(name, f"longer than {limit} characters", field="source")]
    problem = text_problem(source)
    return [ImportProblem(name, problem, field="source")] if problem else []


def _description_problem(label: str, text: object, key: str) -> str | None:
    limit = Criterion._meta.get_field("key").max_length or 120
    if description_type_for(label) is None:
        return f"unknown description label '{label[:100]}'"
    if not isinstance(text, str) or not text.strip():
        return "empty text"
    if len(key) > limit:
        return f"the criterion key '{key[:40]}…' would be longer than {limit} characters"
    return text_problem(text)


def _repeated_keys(name: str, rows) -> list[ImportProblem]:
    """Names equal but for case or punctuation give the same criterion key: refuse them."""
    seen: set[str] = set()
    problems = []
    for key, *_ in rows:
        if key in seen:
            problems.append(
                ImportProblem(
                    name,
                    f"two descriptions give the same criterion '{key}' (names that differ only "
                    "in case or punctuation)",
                    field=key,
                )
            )
        seen.add(key)
    return problems


@transaction.atomic
def _write(rows, source: str, scale: tuple[int, int], name: str) -> CriteriaSummary:
    stored = dict(Criterion.objects.filter(key__in=[r[0] for r in rows]).values_list("key", "text"))
    clashes = [
        ImportProblem(name, f"criterion '{key}' is already stored with a different text", field=key)
        for key, _, _, text in rows
        if key in stored and stored[key] != text
    ]
    if clashes:
        raise ImportFailed(clashes)
    summary = CriteriaSummary(existing=sum(1 for r in rows if r[0] in stored))
    new = [
        Criterion(
            key=key,
            aspect=aspect,
            description_type=dtype,
            text=text,
            scale_min=scale[0],
            scale_max=scale[1],
            source=source,
        )
        for key, aspect, dtype, text in rows
        if key not in stored
    ]
    Criterion.objects.bulk_create(new)
    summary.created = len(new)
    return summary


def criteria_import_upload(*, upload, source: str = "") -> CriteriaSummary:
    """Import an uploaded criteria file (saved to a temporary file first)."""
    import tempfile

    name = Path(upload.name or "criteria.json").name
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        with path.open("wb") as handle:
            for chunk in upload.chunks():
                handle.write(chunk)
        return criteria_import(path=path, source=source)
