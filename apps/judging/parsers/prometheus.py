"""Prometheus outputs: "Feedback: ... [RESULT] n" (methods §7)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from apps.judging.parsers.result import ParseResult, Scale
from apps.judging.parsers.text import (
    check_value,
    conflicting,
    find_labeled,
    judge_values,
    lone_value,
    normalize,
    stated_ratings,
)

RESULT_LABEL = re.compile(
    r"\[[ \t]*result[ \t]*\][ \t]*[:=]?\s*(?:(?:score|rating)[ \t]*[:=]?[ \t]*)?", re.IGNORECASE
)


@dataclass(frozen=True)
class PrometheusParser:
    """Reads the value after "[RESULT]"; a reply that is only a number is accepted too.
    Two different ratings stated in so many words ("2", then "Hmm, on reflection: 5") are
    conflicting, with or without the marker."""

    scale: Scale = field(default_factory=Scale)
    name = "prometheus"

    def parse(self, text: str) -> ParseResult:
        clean = normalize(text or "")
        if not clean:
            return ParseResult.unparsed("empty reply")
        labeled = find_labeled(RESULT_LABEL, clean)
        stated = stated_ratings(clean, self.scale)
        if labeled:
            return judge_values(labeled, self.scale, "result", elsewhere=stated)
        lone = lone_value(clean)
        if lone is not None:
            return check_value(lone, self.scale, "result")
        conflict = conflicting(stated, "result")
        if conflict is not None:
            return conflict
        return ParseResult.unparsed("no '[RESULT]' marker found")

    __call__ = parse
