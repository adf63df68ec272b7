"""Every figure's meaning, declared once (see ``base``): ``definition(key)``, ``label(key)``.

Each module declares the figures of one part of the product and registers them on import.
"""

from __future__ import annotations

from apps.analysis.definitions import human, judges  # noqa: F401  (registers its figures)
from apps.analysis.definitions.base import Better, Definition, registry

DEFINITIONS = registry()


def definition(key: str) -> Definition | None:
    return DEFINITIONS.get(key)


def label(key: str) -> str:
    """The figure's name; a key with no definition is an error (no figure without one)."""
    return DEFINITIONS[key].name


__all__ = ["DEFINITIONS", "Better", "Definition", "definition", "label"]
