"""Pairwise verdicts: "A", "B" or "tie", with or without an explanation (methods §3, §7).

Only explicit verdict signals count, never prose such as "Response A is more detailed":

- MT-Bench brackets ``[[A]]``, ``[[B]]``, ``[[C]]`` (C is MT-Bench's tie) or ``[[tie]]``;
- a label: "Verdict: B", "Final decision: Output (a)", "Winner: tie", "Answer: A" (line start);
- a line that is only a verdict: "A", "Output (b)", "Response A.", "Tie", "Output (a) is better";
- a line ending in a verdict after a colon: "Hmm, on reflection: B" (a bare side a capital);
- a plain sentence of preference: "A is better than B.", "B is the better answer.",
  "I prefer Response A" (a bare side must be a capital A or B).

All signals must agree; none or several different ones leave the output unparsed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from apps.judging.parsers.result import ParseResult, Scale, Verdict
from apps.judging.parsers.text import normalize

_WHO = r"(?:(?:output|response|assistant|answer|model|text|candidate|option)[ \t]*)?"
_TOKEN = (
    r"(?:" + _WHO + r"[\[(]?[ \t]*(?P<side>[ab])[ \t]*[\])]?(?![\w])"
    r"|(?:it[' ]?s[ \t]+a[ \t]+|a[ \t]+)?(?P<tie>tie|draw|equal(?:ly[ \t]+good)?)(?![\w]))"
)
_BRACKETS = re.compile(r"\[\[[ \t]*(?P<side>a|b|c|tie)[ \t]*\]\]", re.IGNORECASE)
_LABELED = re.compile(
    r"(?:\b(?:final[ \t]+)?(?:verdict|decision|judge?ment|winner|choice|preference)"
    r"|^[ \t]*(?:final[ \t]+)?answer"
    r"|\bbetter[ \t]+(?:output|response|answer))"
    r"[ \t]*(?:is[ \t]*|[:=][ \t]*)" + _TOKEN,
    re.IGNORECASE | re.MULTILINE,
)
_LINE = re.compile(
    r"^[ \t]*" + _TOKEN + r"(?:[ \t]+is[ \t]+(?:better|preferred|the[ \t]+better[ \t]+one))?"
    r"[ \t]*[.!]?[ \t]*$",
    re.IGNORECASE | re.MULTILINE,
)


_SIDE_NAMED = r"(?i:(?:output|response|assistant|answer|model|text|candidate|option|summary))"
_SIDE = (
    r"(?:" + _SIDE_NAMED + r"[ \t]*[\[(]?[ \t]*(?P<side>(?i:[ab]))[ \t]*[\])]?"
    r"|[\[(]?(?P<bare>[AB])[\])]?)(?![\w])"
)  # a bare side must be a capital letter: "a" alone is an article
_BETTER = re.compile(  # "A is better than B.", "B is the better answer.", "Output (b) is preferred"
    r"(?<![\w])" + _SIDE + r"[ \t]+is[ \t]+(?:(?i:much|slightly|clearly|far|the|overall|"
    r"definitely)[ \t]+)*(?i:better|preferred|preferable|superior|stronger)(?![\w])"
)
_STATED = re.compile(  # a line ending in a verdict after a colon: "Hmm, on reflection: B"
    r"^[ \t]*[A-Za-z][A-Za-z ,\-']{0,40}?[ \t]*[:=][ \t]*(?:"
    + _SIDE
    + r"|(?P<tie>(?i:tie|draw))(?![\w]))[ \t]*[.!]?[ \t]*$",
    re.MULTILINE,
)
_PREFER = re.compile(  # "I prefer B", "I would choose Response A"
    r"\b(?i:I(?:[ \t]+would|'d)?[ \t]+(?:prefer|choose|pick|select))[ \t]+" + _SIDE
)


def _verdict(match: re.Match[str]) -> Verdict:
    groups = match.groupdict()
    side = (groups.get("side") or groups.get("bare") or "").lower()
    if side == "a":
        return "A"
    if side == "b":
        return "B"
    return "tie"  # [[C]] or a tie word


@dataclass(frozen=True)
class PairwiseParser:
    scale: Scale = field(default_factory=Scale)  # unused: kept so every parser is built alike
    name = "pairwise"

    def parse(self, text: str) -> ParseResult:
        clean = normalize(text or "")
        if not clean:
            return ParseResult.unparsed("empty reply")
        signals = [
            _verdict(m)
            for pattern in (_BRACKETS, _LABELED, _LINE, _STATED, _BETTER, _PREFER)
            for m in pattern.finditer(clean)
        ]
        distinct = sorted(set(signals))
        if not distinct:
            return ParseResult.unparsed("no explicit verdict (A, B or tie) found")
        if len(distinct) > 1:
            return ParseResult.unparsed(f"conflicting verdicts: {', '.join(distinct)}")
        return ParseResult.decided(distinct[0], f"verdict {distinct[0]}")

    __call__ = parse
