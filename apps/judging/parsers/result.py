"""What every judge-output parser returns, and the score scale it checks against (methods §7).

An output that cannot be read with certainty is *unparsed*: it keeps its raw text elsewhere and
gets a reason here. A parser never guesses a score.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

ParseStatus = Literal["parsed", "unparsed"]
Verdict = Literal["A", "B", "tie"]


@dataclass(frozen=True, slots=True)
class Scale:
    """A closed score range [lo, hi]; decimals (3.5) only when the strategy allows them."""

    lo: int = 1
    hi: int = 5
    allow_decimals: bool = False

    def __post_init__(self) -> None:
        if self.lo >= self.hi:
            raise ValueError(f"scale needs lo < hi, got {self.lo}-{self.hi}")

    def __str__(self) -> str:
        return f"{self.lo}-{self.hi}"


@dataclass(frozen=True, slots=True)
class ParseResult:
    status: ParseStatus
    score: float | None
    verdict: Verdict | None
    reason: str

    @property
    def parsed(self) -> bool:
        return self.status == "parsed"

    @classmethod
    def scored(cls, score: float, reason: str) -> ParseResult:
        return cls(status="parsed", score=score, verdict=None, reason=reason)

    @classmethod
    def decided(cls, verdict: Verdict, reason: str) -> ParseResult:
        return cls(status="parsed", score=None, verdict=verdict, reason=reason)

    @classmethod
    def unparsed(cls, reason: str) -> ParseResult:
        return cls(status="unparsed", score=None, verdict=None, reason=reason)
