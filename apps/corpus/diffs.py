"""Diffs stored ahead of the first showing: after an import, the worker computes the diff of
every new text, so the first annotator to see a text does not wait for it on a click
(docs/annotation.md, "Speed"). A text without a stored diff still gets it when first shown
(`Perturbation.diff_ops`), so nothing depends on this having run."""

from __future__ import annotations

import time

from django.db.models import Q

from apps.corpus.diff import DIFF_VERSION, diff_payload
from apps.corpus.models import Perturbation

BATCH = 500


def diffs_store(*, dataset_id: int) -> int:
    """Compute and store the diff of each of the dataset's texts that has none, or one of an
    earlier diff version; returns how many were stored. Safe to run twice or beside an edit:
    a diff stored for a text edited meanwhile no longer matches it, and ``diff_ops`` computes
    it again."""
    missing = (
        Perturbation.objects.filter(item__dataset_id=dataset_id)
        .filter(Q(diff__version__isnull=True) | ~Q(diff__version=DIFF_VERSION))
        .order_by("id")
    )
    stored, after = 0, 0
    while True:
        rows = list(
            missing.filter(id__gt=after).values_list("id", "text", "item__original")[:BATCH]
        )
        if not rows:
            return stored
        filled = [
            Perturbation(id=pk, diff=diff_payload(original, text)) for pk, text, original in rows
        ]
        Perturbation.objects.bulk_update(filled, ["diff"])
        stored += len(filled)
        after = rows[-1][0]


def diffs_store_timed(*, dataset_id: int) -> tuple[int, float]:
    """``diffs_store`` and the seconds it took, for the commands that report it."""
    started = time.perf_counter()
    stored = diffs_store(dataset_id=dataset_id)
    return stored, time.perf_counter() - started
