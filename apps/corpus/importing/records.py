"""The neutral shape every reader produces, whatever the file format."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class PerturbationRecord:
    kind: str
    text: str
    explanation: str = ""
    external_id: str = ""
    row: int | None = None


@dataclass
class ItemRecord:
    file: str
    row: int | None
    external_id: str
    original: str
    source: str = ""
    task: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    perturbations: list[PerturbationRecord] = field(default_factory=list)

    def same_item_as(self, other: ItemRecord) -> bool:
        return (self.original, self.source, self.task) == (other.original, other.source, other.task)
