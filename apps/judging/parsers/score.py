"""Score-only outputs: a bare number (vanilla / G-Eval style), and 0-100 scores (AdvEval).

A number counts only where a rating stands (``text.rating_positions``): after "Score:" or
"Rating:", alone on its line, "n/5", "I would rate it 4"... never a list or step number
("1. The father of modern taxonomy…", "Step 1: read the text."). All such values must agree.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from apps.judging.parsers.result import ParseResult, Scale
from apps.judging.parsers.text import (
    NO_POSITION,
    check_value,
    judge_values,
    lone_value,
    normalize,
    rating_positions,
)


@dataclass(frozen=True)
class ScoreOnlyParser:
    scale: Scale = field(default_factory=Scale)
    name = "score_only"

    def parse(self, text: str) -> ParseResult:
        clean = normalize(text or "")
        if not clean:
            return ParseResult.unparsed("empty reply")
        lone = lone_value(clean)
        if lone is not None:
            return check_value(lone, self.scale, "score")
        found = rating_positions(clean, self.scale)
        if not found:
            return ParseResult.unparsed(NO_POSITION.format(hi=self.scale.hi))
        return judge_values(found, self.scale, "score")

    __call__ = parse


def _hundred() -> Scale:
    return Scale(0, 100)


@dataclass(frozen=True)
class HundredPointParser(ScoreOnlyParser):
    """0-100 scores (AdvEval): same rules, "85%" and "85/100" accepted."""

    scale: Scale = field(default_factory=_hundred)
    name = "score_0_100"
