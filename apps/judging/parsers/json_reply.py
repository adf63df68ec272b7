"""JSON replies: promptfoo's llm-rubric answer ``{"reason", "pass", "score"}`` and its g-eval
answer ``{"score", "reason"}`` (docs/import.md).

The first JSON object in the reply is read, as promptfoo reads it (code fences and words
around it are allowed). Its ``score`` must be a number on the strategy's scale (a fraction
when the scale is 0-1: decimals are what such a score is); only when it has no ``score`` does
``pass`` decide: true is the top of the scale, false the bottom. Anything else is unparsed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from apps.judging.parsers.result import ParseResult, Scale

_DECODER = json.JSONDecoder()


def first_json_object(text: str) -> dict[str, Any] | None:
    """The first ``{...}`` in ``text`` that is a JSON object, or None."""
    start = text.find("{")
    while start != -1:
        try:
            value, _ = _DECODER.raw_decode(text, start)
        except json.JSONDecodeError:
            value = None
        if isinstance(value, dict):
            return value
        start = text.find("{", start + 1)
    return None


@dataclass(frozen=True)
class JsonPassScoreParser:
    scale: Scale = field(default_factory=lambda: Scale(0, 1, allow_decimals=True))
    name = "json_pass_score"

    def parse(self, text: str) -> ParseResult:
        answer = first_json_object(text or "")
        if answer is None:
            return ParseResult.unparsed("no JSON object in the reply")
        if "score" in answer:
            return self._score(answer["score"])
        if isinstance(answer.get("pass"), bool):
            passed = answer["pass"]
            score = self.scale.hi if passed else self.scale.lo
            return ParseResult.scored(float(score), f"no score; pass is {str(passed).lower()}")
        return ParseResult.unparsed('the JSON object has neither "score" nor "pass"')

    def _score(self, value: Any) -> ParseResult:
        if isinstance(value, bool) or not isinstance(value, int | float):
            return ParseResult.unparsed(f'"score" is not a number: {json.dumps(value)}')
        if not self.scale.lo <= value <= self.scale.hi:
            return ParseResult.unparsed(f"score {value:g} is off the scale {self.scale}")
        return ParseResult.scored(float(value), f"score {value:g}")

    __call__ = parse
