"""`judging_load`: the shipped metric judges and one strategy per strategy of docs/methods.md, from
fixtures/judging/. Safe to run again: a strategy gets a new version only when its shipped
content differs from every stored version of it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction

from apps.endpoints.models import ENDPOINT_SETTINGS
from apps.judging.models import Judge, Strategy
from apps.judging.services import STRATEGY_FIELDS, judge_save, strategy_create, strategy_revise

FIXTURES = Path(settings.BASE_DIR) / "fixtures" / "judging"
SHIPPED_NOTE = "shipped with Discern"


def _strategy_fields(row: dict[str, Any], folder: Path) -> dict[str, Any]:
    fields = {k: v for k, v in row.items() if k in STRATEGY_FIELDS}
    fields["prompt_template"] = (folder / row["prompt"]).read_text(encoding="utf-8").strip() + "\n"
    return fields


def _same(strategy: Strategy, fields: dict[str, Any]) -> bool:
    defaults = {
        f.name: f.get_default() for f in Strategy._meta.get_fields() if hasattr(f, "get_default")
    }
    return all(
        getattr(strategy, name) == fields.get(name, defaults.get(name)) for name in STRATEGY_FIELDS
    )


def _load_strategy(row: dict[str, Any], folder: Path) -> bool:
    """True if a version was added."""
    fields = _strategy_fields(row, folder)
    versions = list(Strategy.objects.filter(slug=row["slug"]).order_by("-version"))
    if not versions:
        strategy_create(slug=row["slug"], note=SHIPPED_NOTE, **fields)
        return True
    if any(_same(v, fields) for v in versions):
        return False
    strategy_revise(strategy=versions[0], note=SHIPPED_NOTE, **fields)
    return True


@transaction.atomic
def judging_load(folder: Path = FIXTURES) -> dict[str, int]:
    judges = json.loads((folder / "judges.json").read_text(encoding="utf-8"))
    for row in judges:
        judge = Judge.objects.filter(name=row["name"], created_by=None).first() or Judge(
            name=row["name"]
        )
        for name, value in row.items():
            if name not in ENDPOINT_SETTINGS:
                setattr(judge, name, value)
        endpoint = {name: value for name, value in row.items() if name in ENDPOINT_SETTINGS}
        judge_save(judge=judge, endpoint=endpoint)
    rows = json.loads((folder / "strategies.json").read_text(encoding="utf-8"))
    added = sum(_load_strategy(row, folder) for row in rows)
    return {"judges": len(judges), "strategies": len(rows), "strategy_versions_added": added}
