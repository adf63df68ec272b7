"""Analyze-then-rate outputs: "Analysis: ... Rating: n" (Hu et al. 2024; methods §7)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from apps.judging.parsers.result import ParseResult, Scale
from apps.judging.parsers.text import (
    NO_POSITION,
    check_value,
    find_labeled,
    judge_values,
    lone_value,
    normalize,
    rating_positions,
    stated_ratings,
)

# "Rating: 4", "Final rating = 4", "Rating (1-5): 4", or a header line "Rating" then the value.
RATING_LABEL = re.compile(
    r"\b(?:final[ \t]+|overall[ \t]+)?rating(?:[ \t]*\([^)\n]{0,40}\))?[ \t]*[:=]\s*"
    r"|^[ \t]*(?:final[ \t]+|overall[ \t]+)?rating[ \t]*\n\s*",
    re.IGNORECASE | re.MULTILINE,
)


@dataclass(frozen=True)
class AnalysisRatingParser:
    """Reads the value after "Rating:"; without one, a value where a rating stands
    (``text.rating_positions``: "Score: 4", alone on its line, "4/5"), never a list number.
    Another rating stated in so many words ("Hmm, on reflection: 5") must agree with it."""

    scale: Scale = field(default_factory=Scale)
    name = "analysis_rating"

    def parse(self, text: str) -> ParseResult:
        clean = normalize(text or "")
        if not clean:
            return ParseResult.unparsed("empty reply")
        labeled = find_labeled(RATING_LABEL, clean)
        if labeled:
            stated = stated_ratings(clean, self.scale)
            return judge_values(labeled, self.scale, "rating", elsewhere=stated)
        lone = lone_value(clean)
        if lone is not None:
            return check_value(lone, self.scale, "rating")
        found = rating_positions(clean, self.scale)
        if found:
            return judge_values(found, self.scale, "rating")
        reason = NO_POSITION.format(hi=self.scale.hi)
        return ParseResult.unparsed(f"no 'Rating:' found, and {reason}")

    __call__ = parse
