"""`catalog_load`: the shipped taxonomy, tasks and perturbation kinds from fixtures/catalog/."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction

from apps.catalog.models import Aspect, Criterion, KindPrompt, Metric, PerturbationKind, Task

CATALOG_DIR = Path(settings.BASE_DIR) / "fixtures" / "catalog"
KIND_FIELDS = (
    "name",
    "family",
    "level",
    "method",
    "degree",
    "ability",
    "score_invariant",
    "description",
    "quality_issue",
    "rule",
    "parameters",
    "source",
)


def _load(folder: Path, name: str) -> list[dict[str, Any]]:
    return json.loads((folder / name).read_text(encoding="utf-8"))


@transaction.atomic
def catalog_load(folder: Path = CATALOG_DIR) -> dict[str, int]:
    """Create or update every shipped aspect, criterion, task, metric and kind (idempotent)."""
    aspects = _load_aspects(_load(folder, "aspects.json"))
    tasks = _load_tasks(_load(folder, "tasks.json"))
    kinds = _load_kinds(_load(folder, "kinds.json"))
    _load_prompts(folder.parent / "perturbation_prompts.json")
    return {
        "aspects": aspects,
        "tasks": tasks,
        "kinds": kinds,
        "criteria": Criterion.objects.filter(source="discern").count(),
    }


def _load_aspects(rows: list[dict[str, Any]]) -> int:
    by_slug: dict[str, Aspect] = {}
    for position, row in enumerate(rows):
        aspect, _ = Aspect.objects.update_or_create(
            slug=row["slug"],
            defaults={
                "name": row["name"],
                "definition": row.get("definition", ""),
                "position": position,
                "parent": by_slug[row["parent"]] if row.get("parent") else None,
            },
        )
        by_slug[aspect.slug] = aspect
        for description_type, text in row.get("criteria", {}).items():
            Criterion.objects.update_or_create(
                key=f"discern-{aspect.slug}-{description_type}",
                defaults={
                    "aspect": aspect,
                    "description_type": description_type,
                    "text": text,
                    "scale_min": 1,
                    "scale_max": 5,
                    "source": "discern",
                },
            )
    return len(rows)


def _load_tasks(rows: list[dict[str, Any]]) -> int:
    for row in rows:
        task, _ = Task.objects.update_or_create(
            slug=row["slug"],
            defaults={
                "name": row["name"],
                "text_name": row.get("text_name", "text"),
                "description": row.get("description", ""),
            },
        )
        for position, metric in enumerate(row.get("metrics", [])):
            Metric.objects.update_or_create(
                task=task,
                slug=metric["slug"],
                defaults={
                    "name": metric["name"],
                    "definition": metric.get("definition", ""),
                    "position": position,
                },
            )
    return len(rows)


def _load_kinds(rows: list[dict[str, Any]]) -> int:
    aspects = dict(Aspect.objects.values_list("slug", "id"))
    tasks = dict(Task.objects.values_list("slug", "id"))
    for row in rows:
        defaults = {field: row.get(field, "") for field in KIND_FIELDS}
        defaults["score_invariant"] = bool(row.get("score_invariant"))
        defaults["parameters"] = row.get("parameters") or {}
        defaults["target_aspect_id"] = (
            aspects[row["target_aspect"]] if row.get("target_aspect") else None
        )
        defaults["task_id"] = tasks[row["task"]] if row.get("task") else None
        PerturbationKind.objects.update_or_create(slug=row["slug"], defaults=defaults)
    return len(rows)


def _load_prompts(path: Path) -> None:
    """Each shipped prompt as its version; an edited (newer) version in the database stays."""
    if not path.exists():
        return
    kinds = dict(PerturbationKind.objects.values_list("slug", "id"))
    for slug, spec in json.loads(path.read_text(encoding="utf-8")).items():
        if slug in kinds:
            KindPrompt.objects.get_or_create(
                kind_id=kinds[slug],
                version=spec["version"],
                defaults={
                    "instruction": spec["instruction"],
                    "examples": spec["examples"],
                    "max_edit_size": spec.get("max_edit_size"),
                },
            )
