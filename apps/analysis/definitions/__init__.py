"""Every figure's meaning, declared once (see ``base``): ``definition(key)``, ``label(key)``.

Each module of the package declares the figures of one part of the product (a kind of work's
among them, apps/analysis/kinds.py) and registers them on import; every module is imported
here, and the ``LABELS`` of each that has some are merged.
"""

from __future__ import annotations

from apps.analysis.definitions import judges
from apps.analysis.definitions.base import Better, Definition, registry
from apps.discovery import import_submodules

_MODULES = import_submodules(__name__, __path__)
DEFINITIONS = registry()
#: Words for the columns of these parts' tables that are not figures.
LABELS: dict[str, str] = {
    key: words for module in _MODULES for key, words in getattr(module, "LABELS", {}).items()
}


def definition(key: str) -> Definition | None:
    return DEFINITIONS.get(key)


def label(key: str) -> str:
    """The figure's name; a key with no definition is an error (no figure without one)."""
    return DEFINITIONS[key].name


__all__ = ["DEFINITIONS", "LABELS", "Better", "Definition", "definition", "judges", "label"]
