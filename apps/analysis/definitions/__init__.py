"""Every figure's meaning, declared once (see ``base``): ``definition(key)``, ``label(key)``.

Each module declares the figures of one part of the product and registers them on import.
"""

from __future__ import annotations

from apps.analysis.definitions import adversarial, best_worst, human, judges, reliability
from apps.analysis.definitions.base import Better, Definition, registry

DEFINITIONS = registry()
#: Words for the columns of these parts' tables that are not figures.
LABELS: dict[str, str] = {
    **best_worst.LABELS,
    **reliability.LABELS,
    **adversarial.LABELS,
    **human.LABELS,
}


def definition(key: str) -> Definition | None:
    return DEFINITIONS.get(key)


def label(key: str) -> str:
    """The figure's name; a key with no definition is an error (no figure without one)."""
    return DEFINITIONS[key].name


__all__ = ["DEFINITIONS", "LABELS", "Better", "Definition", "definition", "judges", "label"]
