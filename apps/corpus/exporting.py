"""Export a dataset's items and perturbations as JSONL or CSV, in the import formats.

Both round-trip: exporting and importing the result into a new dataset gives the same
items and perturbations (the perturbation id is exported, so re-import adds nothing).
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from itertools import groupby

from apps.corpus.models import Dataset, Perturbation, SourceItem
from apps.csv_cells import safe_writer

CSV_COLUMNS = [
    "id",
    "source",
    "original",
    "task",
    "metadata",
    "kind",
    "perturbed",
    "explanation",
    "perturbation_id",
]
CHUNK = 2000


def _items_with_perturbations(dataset: Dataset) -> Iterator[tuple[SourceItem, list[Perturbation]]]:
    """Items in id order with their perturbations: two streaming queries, no per-row query."""
    items = (
        SourceItem.objects.filter(dataset=dataset)
        .select_related("task")
        .order_by("id")
        .iterator(chunk_size=CHUNK)
    )
    perturbations = (
        Perturbation.objects.filter(item__dataset=dataset)
        .select_related("kind")
        .order_by("item_id", "id")
        .iterator(chunk_size=CHUNK)
    )
    grouped = groupby(perturbations, key=lambda p: p.item_id)
    pending = next(grouped, None)
    for item in items:
        mine: list[Perturbation] = []
        if pending is not None and pending[0] == item.pk:
            mine = list(pending[1])
            pending = next(grouped, None)
        yield item, mine


def export_jsonl(dataset: Dataset) -> Iterator[str]:
    for item, perturbations in _items_with_perturbations(dataset):
        row = {
            "id": item.external_id,
            "source": item.source,
            "original": item.original,
            "task": item.task.slug if item.task else "",
            "metadata": item.metadata,
            "perturbations": [
                {
                    "id": p.external_id,
                    "kind": p.kind.slug,
                    "text": p.text,
                    "explanation": p.explanation,
                }
                for p in perturbations
            ],
        }
        yield json.dumps(row, ensure_ascii=False) + "\n"


def export_csv(dataset: Dataset) -> Iterator[str]:
    buffer = io.StringIO()
    writer = safe_writer(buffer)
    writer.writerow(CSV_COLUMNS)
    for item, perturbations in _items_with_perturbations(dataset):
        base = [
            item.external_id,
            item.source,
            item.original,
            item.task.slug if item.task else "",
            json.dumps(item.metadata, ensure_ascii=False) if item.metadata else "",
        ]
        rows: list[Perturbation | None] = list(perturbations) or [None]
        for p in rows:
            extra = [p.kind.slug, p.text, p.explanation, p.external_id] if p else ["", "", "", ""]
            writer.writerow(base + extra)
        yield buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
    yield buffer.getvalue()
