"""Score-only outputs: a bare number (vanilla / G-Eval style), and 0-100 scores (AdvEval).

A labeled value ("Score: 4") wins; otherwise the reply must hold exactly one distinct number,
not counting mentions of the scale itself ("on a 1-5 scale").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from apps.judging.parsers.result import ParseResult, Scale
from apps.judging.parsers.text import (
    check_value,
    find_labeled,
    free_values,
    judge_values,
    lone_value,
    normalize,
)

SCORE_LABEL = re.compile(
    r"\b(?:final[ \t]+|overall[ \t]+)?(?:score|rating|grade)"
    r"(?:[ \t]*\([^)\n]{0,40}\))?[ \t]*[:=]\s*"
    r"|\[[ \t]*result[ \t]*\][ \t]*[:=]?\s*",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class ScoreOnlyParser:
    scale: Scale = field(default_factory=Scale)
    name = "score_only"

    def parse(self, text: str) -> ParseResult:
        clean = normalize(text or "")
        if not clean:
            return ParseResult.unparsed("empty reply")
        labeled = find_labeled(SCORE_LABEL, clean)
        if labeled:
            return judge_values(labeled, self.scale, "score")
        lone = lone_value(clean)
        if lone is not None:
            return check_value(lone, self.scale, "score")
        numbers = free_values(clean, self.scale)
        if not numbers:
            return ParseResult.unparsed("no number in the reply")
        distinct = sorted({v.number for v in numbers})
        if len(distinct) > 1:
            shown = ", ".join(f"{n:g}" for n in distinct)
            return ParseResult.unparsed(f"several different numbers ({shown}): no single score")
        return judge_values(numbers, self.scale, "score")

    __call__ = parse


def _hundred() -> Scale:
    return Scale(0, 100)


@dataclass(frozen=True)
class HundredPointParser(ScoreOnlyParser):
    """0-100 scores (AdvEval): same rules, "85%" and "85/100" accepted."""

    scale: Scale = field(default_factory=_hundred)
    name = "score_0_100"
