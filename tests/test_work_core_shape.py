"""The work core's shape, as issue 52 set it: a maintainer reads `Work` in under 15 public
methods, a kind's Slot and Skip models are a few lines on their abstract bases, and only the
SQL layer asks which database it runs on."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from apps.annotation.models.base import LeasedSlot, Skip
from apps.annotation.services.leases import PooledWork
from apps.annotation.services.work import Work

APPS = Path(__file__).resolve().parents[1] / "apps"


def public_methods(cls: type) -> list[str]:
    """The public callables and properties a class defines itself (not inherited)."""
    return [
        name
        for name, value in vars(cls).items()
        if not name.startswith("_")
        and (callable(value) or isinstance(value, property | classmethod | staticmethod))
        and not inspect.isclass(value)
    ]


def test_work_has_under_15_public_methods():
    assert len(public_methods(Work)) < 15, public_methods(Work)
    assert len(public_methods(PooledWork)) < 15, public_methods(PooledWork)


def test_a_kinds_slot_and_skip_models_are_under_10_lines():
    kinds = [*LeasedSlot.__subclasses__(), *Skip.__subclasses__()]
    assert len(kinds) >= 8
    for model in kinds:
        lines = inspect.getsource(model).strip().splitlines()
        assert len(lines) < 10, f"{model.__name__}: {len(lines)} lines"


def test_only_the_sql_layer_asks_which_database_it_runs_on():
    asking = re.compile(r"\bconnection\.vendor\b|\bconnections\[[^]]+\]\.vendor\b")
    found = sorted(
        str(path.relative_to(APPS))
        for path in APPS.rglob("*.py")
        if "migrations" not in path.parts and asking.search(path.read_text())
    )
    assert found == ["plain_sql.py"]
