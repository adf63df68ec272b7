"""`human_ratings_import`: per-annotator Likert ratings from a published dataset.

CSV (or TSV) with columns `item`, `criterion`, `rater`, `score` and optionally `perturbation`
(a perturbation's id; empty = the item's original was rated); or JSONL objects with the same
keys. Items and perturbations are matched by id within one dataset. All or nothing.
"""

from __future__ import annotations

import csv
import math
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from django.db import transaction
from django.utils.text import slugify

from apps.analysis.models import HumanRating
from apps.catalog.models import Aspect, Metric
from apps.corpus.models import Dataset, Perturbation, SourceItem
from apps.inputs.fields import BadJson, json_loads, text_problem
from apps.inputs.problems import ImportFailed, ImportProblem
from apps.inputs.text_files import open_utf8

COLUMNS = ("item", "criterion", "rater", "score")
# Stored columns' lengths (HumanRating); item and perturbation must match stored ids anyway.
MAX_CHARS = {"criterion": 100, "rater": 100}
MAX_SOURCE_CHARS = 200


@dataclass
class RatingsSummary:
    created: int = 0
    existing: int = 0
    scale: tuple[float, float] = (0.0, 0.0)
    #: Rater-quality warnings on the dataset's ratings after the import (near-duplicate
    #: raters, straight-liners, raters whose removal raises alpha): see docs/analysis.md.
    warnings: list[str] = field(default_factory=list)


def _rows(path: Path) -> list[tuple[int, dict[str, Any]]]:
    with open_utf8(path) as handle:
        if path.suffix.lower() in (".jsonl", ".ndjson", ".json"):
            return _json_rows(path.name, handle)
        return _csv_rows(path.name, handle, "\t" if path.suffix.lower() == ".tsv" else ",")


def _json_rows(name: str, handle: TextIO) -> list[tuple[int, dict[str, Any]]]:
    rows = []
    for n, line in enumerate(handle, start=1):
        if line.strip():
            try:
                obj = json_loads(line, check_strings=False)
            except BadJson as exc:
                raise ImportFailed([ImportProblem(name, str(exc), row=n)]) from exc
            rows.append((n, obj if isinstance(obj, dict) else {}))
    return rows


def _csv_rows(name: str, handle: TextIO, delimiter: str) -> list[tuple[int, dict[str, Any]]]:
    # strict: an unclosed quote is an error, never two rows merged into one
    reader = csv.DictReader(handle, delimiter=delimiter, strict=True)
    rows: list[tuple[int, dict[str, Any]]] = []
    try:
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise ImportFailed(
                [ImportProblem(name, f"missing column(s) {', '.join(missing)}", row=1)]
            )
        for n, values in enumerate(reader, start=2):
            rows.append((n, values))
    except csv.Error as exc:
        bad = rows[-1][0] + 1 if rows else 2
        message = f"a quoted field is not closed properly ({exc}); double a quote inside quotes"
        raise ImportFailed([ImportProblem(name, message, row=bad)]) from exc
    return rows


def human_ratings_import(
    *, path: Path, dataset: Dataset, scale: tuple[float, float] | None = None, source: str = ""
) -> RatingsSummary:
    """Validate every row, then store all ratings (or none). Re-importing adds nothing."""
    rows = _rows(path)
    items = dict(SourceItem.objects.filter(dataset=dataset).values_list("external_id", "id"))
    perturbations = dict(
        Perturbation.objects.filter(item__dataset=dataset)
        .exclude(external_id="")
        .values_list("external_id", "id")
    )
    problems: list[ImportProblem] = []
    parsed = [_parse(path.name, n, row, items, perturbations, problems) for n, row in rows]
    ratings = [r for r in parsed if r is not None]
    scores = [r["score"] for r in ratings]
    if scale is None and scores:
        scale = (min(scores), max(scores))
    lo, hi = scale or (0.0, 0.0)
    for (n, _), r in zip(rows, parsed, strict=True):
        if r is not None and not lo <= r["score"] <= hi:
            problems.append(
                ImportProblem(path.name, f"{r['score']} is outside {lo}-{hi}", n, "score")
            )
    _duplicates(path.name, rows, parsed, problems)
    source = source or path.name[:MAX_SOURCE_CHARS]
    if len(source) > MAX_SOURCE_CHARS or text_problem(source):
        problems.append(
            ImportProblem(
                path.name, f"must be text of at most {MAX_SOURCE_CHARS} characters", field="source"
            )
        )
    if problems:
        raise ImportFailed(problems)
    summary = _write(ratings, dataset, (lo, hi), source)
    summary.warnings = dataset_rater_warnings(dataset)
    return summary


def dataset_rater_warnings(dataset: Dataset) -> list[str]:
    """Rater-quality warnings over every rating stored for the dataset, per criterion."""
    from apps.analysis.reports.rater_quality import rater_warnings  # numpy, scipy: only here

    by_criterion: dict[str, dict[tuple, dict[str, float]]] = defaultdict(lambda: defaultdict(dict))
    rows = HumanRating.objects.filter(item__dataset=dataset).values_list(
        "criterion_name", "item_id", "perturbation_id", "rater", "score"
    )
    for criterion, item, perturbation, rater, score in rows:
        by_criterion[criterion][(item, perturbation)][rater] = score
    return rater_warnings(by_criterion)


def _parse(name, n, row, items, perturbations, problems) -> dict[str, Any] | None:
    values = {c: str(row.get(c) if row.get(c) is not None else "").strip() for c in COLUMNS}
    bad = False
    for column in COLUMNS:
        problem = _value_problem(column, values[column], row.get(column))
        if problem:
            problems.append(ImportProblem(name, problem, n, column))
            bad = True
    if values["item"] and values["item"] not in items:
        problems.append(
            ImportProblem(name, f"no item '{values['item']}' in the dataset", n, "item")
        )
        bad = True
    perturbation = str(row.get("perturbation") or "").strip()
    if perturbation and perturbation not in perturbations:
        problems.append(
            ImportProblem(
                name, f"no perturbation '{perturbation}' in the dataset", n, "perturbation"
            )
        )
        bad = True
    try:
        score = float(values["score"])
        if not math.isfinite(score):
            raise ValueError
    except ValueError:
        if values["score"]:
            problems.append(ImportProblem(name, f"not a number: '{values['score']}'", n, "score"))
        return None
    if bad:
        return None
    return {
        "item_id": items[values["item"]],
        "perturbation_id": perturbations.get(perturbation),
        "criterion_name": values["criterion"],
        "rater": values["rater"],
        "score": score,
    }


def _value_problem(column: str, text: str, raw: Any) -> str | None:
    if raw is not None and not isinstance(raw, str | int | float):
        return "must be a string or a number"
    if not text:
        return "empty"
    limit = MAX_CHARS.get(column)
    if limit and len(text) > limit:
        return f"longer than {limit} characters"
    return text_problem(text)


def _duplicates(name, rows, parsed, problems) -> None:
    seen: dict[tuple, int] = {}
    for (n, _), r in zip(rows, parsed, strict=True):
        if r is None:
            continue
        key = (r["item_id"], r["perturbation_id"], r["criterion_name"], r["rater"])
        if key in seen:
            problems.append(
                ImportProblem(
                    name, f"the same rater, text and criterion as row {seen[key]}", n, "rater"
                )
            )
        seen.setdefault(key, n)


@transaction.atomic
def _write(ratings, dataset, scale, source) -> RatingsSummary:
    aspects = {slugify(a.name): a.pk for a in Aspect.objects.all()}
    task_metrics = {
        (task_id, slug): pk
        for task_id, slug, pk in Metric.objects.values_list("task_id", "slug", "id")
    }
    item_tasks = dict(SourceItem.objects.filter(dataset=dataset).values_list("id", "task_id"))
    stored = set(
        HumanRating.objects.filter(item__dataset=dataset).values_list(
            "item_id", "perturbation_id", "criterion_name", "rater"
        )
    )
    new = []
    for r in ratings:
        key = (r["item_id"], r["perturbation_id"], r["criterion_name"], r["rater"])
        if key in stored:
            continue
        slug = slugify(r["criterion_name"])
        new.append(
            HumanRating(
                **r,
                aspect_id=aspects.get(slug),
                metric_id=task_metrics.get((item_tasks[r["item_id"]], slug)),
                scale_min=scale[0],
                scale_max=scale[1],
                source=source,
            )
        )
    HumanRating.objects.bulk_create(new)
    return RatingsSummary(created=len(new), existing=len(ratings) - len(new), scale=scale)


def ratings_import_upload(
    *, upload, dataset: Dataset, scale=None, source: str = ""
) -> RatingsSummary:
    """Import an uploaded ratings file (kept under its own name, for the suffix and errors)."""
    import tempfile

    name = Path(upload.name or "ratings.csv").name
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        with path.open("wb") as handle:
            for chunk in upload.chunks():
                handle.write(chunk)
        return human_ratings_import(path=path, dataset=dataset, scale=scale, source=source or name)
