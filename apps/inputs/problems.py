"""What went wrong in an input file, and where."""

from __future__ import annotations

from dataclasses import dataclass

# More than this many problems and the rest are summarised: the first ones are enough to act on.
MAX_REPORTED = 50


@dataclass(frozen=True)
class ImportProblem:
    file: str
    message: str
    row: int | None = None
    field: str | None = None

    def __str__(self) -> str:
        place = self.file
        if self.row is not None:
            place += f", row {self.row}"
        if self.field:
            place += f", field '{self.field}'"
        return f"{place}: {self.message}"


class ImportFailed(Exception):
    """Raised before anything is written; carries every problem found."""

    def __init__(self, problems: list[ImportProblem]):
        self.problems = problems
        shown = "\n".join(str(p) for p in problems[:MAX_REPORTED])
        more = len(problems) - MAX_REPORTED
        if more > 0:
            shown += f"\n... and {more} more problems"
        super().__init__(shown)

    def as_strings(self) -> list[str]:
        return [str(p) for p in self.problems[:MAX_REPORTED]]
