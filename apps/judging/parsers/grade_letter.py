"""Letter grades: Inspect AI's "GRADE: C|P|I" and promptfoo's closed-QA final "Y"/"N".

A grade pattern is a regular expression with one capture group for the letter, searched once
in the reply as Inspect does (``re.search``; its default, ``DEFAULT_GRADE_PATTERN``, wants the
grade on the last line). A strategy may store its own (``Strategy.grade_pattern``). The letter
is worth Inspect's values: C (correct) 1, P (partial) 0.5, I (incorrect) 0; promptfoo's Y
(the criterion is met) 1, N 0. No match, or another letter: unparsed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from apps.judging.parsers.result import ParseResult, Scale

#: Inspect AI's default (src/inspect_ai/scorer/_model.py, DEFAULT_GRADE_PATTERN).
DEFAULT_GRADE_PATTERN = r"(?i)GRADE\s*:\s*([CPI])(.*)$"
LETTER_VALUES = {"C": 1.0, "P": 0.5, "I": 0.0, "Y": 1.0, "N": 0.0}


def grade_pattern_problem(pattern: str) -> str | None:
    """Why ``pattern`` cannot read a grade (None: it can)."""
    try:
        compiled = re.compile(pattern)
    except re.error as error:
        return f"not a regular expression: {error}"
    if compiled.groups < 1:
        return "a grade pattern needs a capture group for the letter, e.g. GRADE: ([CPI])"
    return None


@dataclass(frozen=True)
class GradeLetterParser:
    scale: Scale = field(default_factory=lambda: Scale(0, 1, allow_decimals=True))
    pattern: str = DEFAULT_GRADE_PATTERN
    name = "grade_letter"

    def parse(self, text: str) -> ParseResult:
        match = re.search(self.pattern, text or "")
        if match is None:
            return ParseResult.unparsed(f"no grade found (pattern {self.pattern})")
        letter = (match.group(1) or "").strip().upper()
        if letter not in LETTER_VALUES:
            return ParseResult.unparsed(f"grade {letter!r} is not one of C, P, I, Y, N")
        value = LETTER_VALUES[letter]
        if not self.scale.lo <= value <= self.scale.hi:
            return ParseResult.unparsed(f"grade {letter} ({value:g}) is off the scale {self.scale}")
        return ParseResult.scored(value, f"grade {letter}")

    __call__ = parse
