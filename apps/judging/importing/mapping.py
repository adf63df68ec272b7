"""What an import maps: each source field to the Discern field it becomes (or why it becomes
none), and the judge, endpoint and strategy these make."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: Where a Discern field lives, for the preview's words ("endpoint: base_url").
ENDPOINT, STRATEGY, JUDGE, NOWHERE = "endpoint", "strategy", "judge", ""


class ImportRefused(ValueError):
    """The file cannot be imported; each problem names its field ("tests[0].assert[1].type:
    ..."). Nothing is created."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class MappedField:
    """One row of the preview: ``source`` (a path in the file) → ``target`` (a Discern field,
    as "strategy.prompt_template"; "" when it has none) = ``value``, and what happens to it."""

    source: str
    target: str
    value: str
    note: str = ""


@dataclass
class ImportedJudge:
    """One judge a file describes: its proposed name, its endpoint settings and strategy
    fields, and the rows saying where each came from."""

    name: str
    origin: str
    endpoint: dict[str, Any]
    strategy: dict[str, Any]
    rows: list[MappedField] = field(default_factory=list)

    def source_of(self, target: str) -> str:
        """The file's field that set ``target`` ("endpoint.api_key_env", or a bare field name
        "api_key_env"), for an error's name; the judge's origin when none did."""
        return next(
            (r.source for r in self.rows if r.target == target or r.target.endswith(f".{target}")),
            self.origin,
        )
