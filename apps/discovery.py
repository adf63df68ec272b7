"""Finding what a kind of work brings without naming it: each package whose modules register
something (models, work, pages, report sections) imports all of its modules through here."""

from __future__ import annotations

from collections.abc import Iterable
from importlib import import_module
from pkgutil import iter_modules
from types import ModuleType


def import_submodules(package: str, path: Iterable[str]) -> list[ModuleType]:
    """Import every module of `package` (its `__name__` and `__path__`), in name order."""
    names = sorted(module.name for module in iter_modules(list(path)))
    return [import_module(f"{package}.{name}") for name in names]
