"""Judge output parsers (methods §7), one module per output format, and their registry.

Usage::

    parser = get_parser("analysis_rating", lo=1, hi=5)
    result = parser.parse(raw_text)   # ParseResult(status, score, verdict, reason)

``PARSERS`` maps a strategy's output-format name to a parser class; every class is built with a
``Scale``. ``geval_logprob_score`` scores from token log-probabilities instead of text.
"""

from __future__ import annotations

from typing import Protocol

from apps.judging.parsers.grade_letter import (
    DEFAULT_GRADE_PATTERN,
    GradeLetterParser,
    grade_pattern_problem,
)
from apps.judging.parsers.json_reply import JsonPassScoreParser
from apps.judging.parsers.logprobs import (
    geval_logprob_score,
    logprob_reading,
    score_token_top_logprobs,
)
from apps.judging.parsers.pairwise import PairwiseParser
from apps.judging.parsers.prometheus import PrometheusParser
from apps.judging.parsers.rating import AnalysisRatingParser
from apps.judging.parsers.result import ParseResult, ParseStatus, Scale, Verdict
from apps.judging.parsers.score import HundredPointParser, ScoreOnlyParser


class OutputParser(Protocol):
    @property
    def scale(self) -> Scale: ...

    def parse(self, text: str) -> ParseResult: ...


class ParserFactory(Protocol):
    def __call__(self, scale: Scale = ...) -> OutputParser: ...


PARSERS: dict[str, ParserFactory] = {
    AnalysisRatingParser.name: AnalysisRatingParser,
    PrometheusParser.name: PrometheusParser,
    ScoreOnlyParser.name: ScoreOnlyParser,
    HundredPointParser.name: HundredPointParser,
    PairwiseParser.name: PairwiseParser,
    JsonPassScoreParser.name: JsonPassScoreParser,
    GradeLetterParser.name: GradeLetterParser,
}
#: Parsers that read with a pattern a strategy may store (``Strategy.grade_pattern``).
PATTERN_PARSERS = {GradeLetterParser.name: GradeLetterParser}
#: Parsers that read a score token, so that G-Eval probabilities can weigh it.
NUMERIC_TOKEN_PARSERS = frozenset(
    {
        AnalysisRatingParser.name,
        PrometheusParser.name,
        ScoreOnlyParser.name,
        HundredPointParser.name,
    }
)


def get_parser(
    name: str,
    *,
    lo: int | None = None,
    hi: int | None = None,
    allow_decimals: bool = False,
    grade_pattern: str = "",
) -> OutputParser:
    """The parser registered as ``name``; without lo/hi it keeps its own default scale.
    ``grade_pattern``: the pattern a letter-grade parser reads with (empty: its default)."""
    try:
        factory = PARSERS[name]
    except KeyError:
        raise KeyError(f"unknown output format {name!r}; known: {sorted(PARSERS)}") from None
    if lo is None and hi is None:
        default = factory().scale
        lo, hi = default.lo, default.hi
    if lo is None or hi is None:
        raise ValueError("give both lo and hi, or neither")
    scale = Scale(lo, hi, allow_decimals)
    if grade_pattern:
        if name not in PATTERN_PARSERS:
            raise ValueError(f"{name} reads no grade pattern")
        return PATTERN_PARSERS[name](scale, grade_pattern)
    return factory(scale)


__all__ = [
    "DEFAULT_GRADE_PATTERN",
    "NUMERIC_TOKEN_PARSERS",
    "PARSERS",
    "PATTERN_PARSERS",
    "AnalysisRatingParser",
    "GradeLetterParser",
    "HundredPointParser",
    "JsonPassScoreParser",
    "OutputParser",
    "PairwiseParser",
    "ParseResult",
    "ParseStatus",
    "PrometheusParser",
    "Scale",
    "ScoreOnlyParser",
    "Verdict",
    "get_parser",
    "geval_logprob_score",
    "grade_pattern_problem",
    "logprob_reading",
    "score_token_top_logprobs",
]
