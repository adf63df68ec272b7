"""Shared reading helpers for judge outputs: markdown clean-up and numbers with their context.

Parsers find candidate values (after a label, or standalone) as ``RawValue`` and hand them to
``judge_values``, which is the one place that decides parsed vs unparsed for numeric scores:
conflicting values, ranges, foreign denominators, decimals and out-of-scale values are all
refused with a reason.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from apps.judging.parsers.result import ParseResult, Scale

NUMBER = r"-?\d+(?:\.\d+)?"
# A value as judges write it: "4", "[4]", "(4)", "4/5", "4 out of 5", "85%", "4 (out of 5)".
VALUE = (
    r"[\[({]*[ \t]*(?P<num>" + NUMBER + r")[ \t]*[\])}]*"
    r"(?:[ \t]*\(?[ \t]*(?:/|out[ \t]+of)[ \t]*(?P<den>" + NUMBER + r")[ \t]*\)?)?"
    r"(?P<pct>[ \t]*%)?"
    r"(?P<alt>[ \t]*(?:-|to|or|and)[ \t]*-?\d)?"
    r"(?![\w]|\.\d)"
)
_STANDALONE = re.compile(r"(?<![\w.\-/])" + VALUE, re.IGNORECASE)
_LONE = re.compile(r"\A[\s\[({]*" + VALUE + r"[\s\])}]*[.!]?\s*\Z", re.IGNORECASE)

_EMPHASIS = re.compile(r"\*+|`+|~~|(?<!\w)__|__(?!\w)")
_LINE_PREFIX = re.compile(r"^[ \t]*(?:#{1,6}[ \t]*|>[ \t]*|[-+*][ \t]+)+", re.MULTILINE)
_TRANSLATE = str.maketrans(
    {"\u00a0": " ", "\uff1a": ":", "\u2212": "-", "\u2013": "-", "\u2014": "-", "\u2009": " "}
)


def normalize(text: str) -> str:
    """Drop markdown decoration (bold, code, headers, bullets, quotes) and odd Unicode."""
    text = text.translate(_TRANSLATE)
    text = _LINE_PREFIX.sub("", text)
    return _EMPHASIS.sub("", text).strip()


@dataclass(frozen=True, slots=True)
class RawValue:
    """A number found in a judge output, with what surrounded it."""

    text: str
    number: float
    denominator: float | None = None
    percent: bool = False
    ranged: bool = False

    @classmethod
    def from_match(cls, match: re.Match[str]) -> RawValue:
        den = match.group("den")
        whole = match.group("value") if "value" in match.re.groupindex else match.group(0)
        return cls(
            text=whole.strip(),
            number=float(match.group("num")),
            denominator=float(den) if den is not None else None,
            percent=match.group("pct") is not None,
            ranged=match.group("alt") is not None,
        )


_VALUE_AT = re.compile(VALUE, re.IGNORECASE)


def find_labeled(label: re.Pattern[str], text: str) -> list[RawValue | None]:
    """What follows each hit of ``label`` (a regex whose match ends where the value starts).

    ``None`` marks a label followed by no readable number ("Rating: N/A").
    """
    found: list[RawValue | None] = []
    for hit in label.finditer(text):
        match = _VALUE_AT.match(text, hit.end())
        found.append(RawValue.from_match(match) if match else None)
    return found


def lone_value(text: str) -> RawValue | None:
    """The value if the whole (normalized) text is nothing but one value, e.g. "4" or "**4/5**"."""
    match = _LONE.match(text)
    return RawValue.from_match(match) if match else None


def check_value(value: RawValue, scale: Scale, what: str) -> ParseResult:
    if value.ranged:
        return ParseResult.unparsed(f"{what} '{value.text}' is a range, not one value")
    if value.denominator is not None and value.denominator != scale.hi:
        return ParseResult.unparsed(
            f"{what} '{value.text}' is out of {value.denominator:g}, not on the scale {scale}"
        )
    if value.percent and (scale.lo, scale.hi) != (0, 100):
        return ParseResult.unparsed(f"{what} '{value.text}' is a percentage on a {scale} scale")
    if not value.number.is_integer() and not scale.allow_decimals:
        return ParseResult.unparsed(
            f"{what} '{value.text}' is not a whole number and this strategy allows no decimals"
        )
    if not scale.lo <= value.number <= scale.hi:
        return ParseResult.unparsed(f"{what} {value.number:g} is outside the scale {scale}")
    return ParseResult.scored(value.number, f"{what} {value.number:g} on the scale {scale}")


def conflicting(values: Sequence[RawValue], what: str) -> ParseResult | None:
    """The refusal "conflicting scores: 2, 5" when the values say different numbers, else None."""
    distinct = sorted({v.number for v in values})
    if len(distinct) < 2:
        return None
    shown = ", ".join(f"{n:g}" for n in distinct)
    return ParseResult.unparsed(f"conflicting {what}s: {shown}")


def judge_values(
    values: Sequence[RawValue | None],
    scale: Scale,
    what: str,
    elsewhere: Sequence[RawValue] = (),
) -> ParseResult:
    """One score from candidate values: all must be readable and agree, and be valid.

    ``elsewhere`` holds the other ratings the reply states (``stated_ratings``): one that
    differs from the values makes the reply conflicting too ("Rating: 2 … on reflection: 5").
    """
    if not values:
        return ParseResult.unparsed(f"no {what} found")
    readable = [v for v in values if v is not None]
    if len(readable) < len(values):
        return ParseResult.unparsed(f"a {what} label is not followed by a number")
    conflict = conflicting([*readable, *elsewhere], what)
    if conflict is not None:
        return conflict
    results = [check_value(v, scale, what) for v in readable]
    refused = [r for r in results if not r.parsed]
    if refused:
        return refused[0]
    if len(results) > 1:
        return replace(results[0], reason=f"{results[0].reason} (stated {len(results)} times)")
    return results[0]


# -- where a rating stands --------------------------------------------------------------------
# A number counts only where the format says a rating stands; never a list or step number
# ("1. The father of modern taxonomy is…", "Step 1: read the text.").

_V = "(?P<value>" + VALUE + ")"
_LABEL = re.compile(  # "Score: 4", "Final rating = 4", "Rating (1-5): 4", "[RESULT] 4"
    r"\b(?:final[ \t]+|overall[ \t]+)?(?:score|rating|grade)(?:[ \t]*\([^)\n]{0,40}\))?"
    r"[ \t]*[:=]\s*|\[[ \t]*result[ \t]*\][ \t]*[:=]?\s*",
    re.IGNORECASE,
)
_SOFT_LABEL = re.compile(  # "my rating is 4", "a score of 35"
    r"\b(?:score|rating|grade)[ \t]+(?:is|of|would[ \t]+be|will[ \t]+be)[ \t]+(?:a[ \t]+)?" + _V,
    re.IGNORECASE,
)
_QUALITY_LINE = re.compile(  # a line "Coherence: 3", "Coherence (1-5): 3", "Hmm, on reflection: 5"
    r"^[ \t]*[A-Za-z][A-Za-z ,\-']{0,40}?(?:[ \t]*\([^)\n]{0,40}\))?[ \t]*[:=][ \t]*"
    + _V
    + r"[ \t]*[.!]?[ \t]*$",
    re.IGNORECASE | re.MULTILINE,
)
_ALONE = re.compile(r"^[ \t]*" + _V + r"[ \t]*[\])}]*[ \t]*[.!]?[ \t]*$", re.MULTILINE)
_LEADING = re.compile(r"\A[ \t]*" + _V + r"[ \t]+-[ \t]+\S", re.IGNORECASE)  # "4 - good"
_WHAT = r"(?:it|this|that|the|summary|text|response|answer|output|translation|story|one)"
_RATE_VERB = re.compile(  # "I would rate this summary 4 out of 5"
    r"\b(?:rate|rated|score|scored|grade|graded|deserves?)\b[ \t]+(?:(?:"
    + _WHAT
    + r"|as|a|an|at|with|of|score|rating|grade)[ \t]+){0,5}"
    + _V,
    re.IGNORECASE,
)
_GIVE_VERB = re.compile(  # "I give it a 2", "I'd give the response a score of 35"
    r"\b(?:give|gives|giving|gave|assign|assigns|assigned)\b[ \t]+(?:it|this|that|the[ \t]+\w+)"
    r"[ \t]+(?:(?:a|an|score|rating|grade|of)[ \t]+){0,4}" + _V,
    re.IGNORECASE,
)
_OUT_OF = re.compile(r"out[ \t]+of", re.IGNORECASE)


def rating_positions(text: str, scale: Scale) -> list[RawValue | None]:
    """Every value standing where a rating stands: after a score/rating label or [RESULT], a
    line that is a quality and a value, a value alone on its line, "n/hi" or "n out of m", a
    rating verb ("rate it 4", "give it a 2"), or "n - why" opening the reply. ``None`` marks a
    label followed by no number ("Score: N/A"). A value found by several rules counts once."""
    found: dict[int, RawValue | None] = {}
    for hit in _LABEL.finditer(text):
        match = _VALUE_AT.match(text, hit.end())
        found[hit.end()] = RawValue.from_match(match) if match else None
    for pattern in (_SOFT_LABEL, _QUALITY_LINE, _ALONE, _LEADING, _RATE_VERB, _GIVE_VERB):
        for match in pattern.finditer(text):
            found.setdefault(match.start("value"), RawValue.from_match(match))
    for match in _STANDALONE.finditer(text):
        value = RawValue.from_match(match)
        out_of = value.denominator is not None and _OUT_OF.search(match.group(0))
        if value.denominator == scale.hi or out_of:
            found.setdefault(match.start(), value)
    return list(found.values())


NO_POSITION = (
    "no rating where one stands (after 'Score:' or 'Rating:', alone on its line, as n/{hi}); "
    "list and step numbers are not ratings"
)


def stated_ratings(text: str, scale: Scale) -> list[RawValue]:
    """The values on the scale that the reply states as a rating in so many words: after a
    score/rating label or [RESULT], or making up a line ("5", "Coherence: 3", "Hmm, on
    reflection: 5"). A format with its own label checks these against its labeled value; the
    looser positions (rating verbs, "n/5" in prose) are left out, as an analysis often
    mentions other levels ("it does not deserve a 5")."""
    found: dict[int, RawValue] = {}
    for hit in _LABEL.finditer(text):
        match = _VALUE_AT.match(text, hit.end())
        if match:
            found[hit.end()] = RawValue.from_match(match)
    for pattern in (_QUALITY_LINE, _ALONE):
        for match in pattern.finditer(text):
            found.setdefault(match.start("value"), RawValue.from_match(match))
    return [v for v in found.values() if check_value(v, scale, "rating").parsed]
