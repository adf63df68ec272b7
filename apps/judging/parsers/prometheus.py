"""Prometheus outputs: "Feedback: ... [RESULT] n" (methods §7)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from apps.judging.parsers.result import ParseResult, Scale
from apps.judging.parsers.text import check_value, find_labeled, judge_values, lone_value, normalize

RESULT_LABEL = re.compile(
    r"\[[ \t]*result[ \t]*\][ \t]*[:=]?\s*(?:(?:score|rating)[ \t]*[:=]?[ \t]*)?", re.IGNORECASE
)


@dataclass(frozen=True)
class PrometheusParser:
    """Reads the value after "[RESULT]"; a reply that is only a number is accepted too."""

    scale: Scale = field(default_factory=Scale)
    name = "prometheus"

    def parse(self, text: str) -> ParseResult:
        clean = normalize(text or "")
        if not clean:
            return ParseResult.unparsed("empty reply")
        labeled = find_labeled(RESULT_LABEL, clean)
        if labeled:
            return judge_values(labeled, self.scale, "result")
        lone = lone_value(clean)
        if lone is not None:
            return check_value(lone, self.scale, "result")
        return ParseResult.unparsed("no '[RESULT]' marker found")

    __call__ = parse
