"""Sentiment polarity of judge justifications (SPEC §5), with TextBlob.

TextBlob's default analyser (the pattern lexicon, `en-sentiment.xml`) ships inside its wheel
and needs no NLTK corpora, so it works offline; nothing is downloaded. Polarity runs from -1
(negative) to 1 (positive); a text with no word of the lexicon scores 0.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from textblob.en.sentiments import PatternAnalyzer


@lru_cache(maxsize=1)
def _analyzer() -> PatternAnalyzer:
    return PatternAnalyzer()


def polarity(text: str) -> float:
    """TextBlob's polarity of one text (what ``TextBlob(text).sentiment.polarity`` gives)."""
    return float(_analyzer().analyze(text).polarity)


@dataclass(frozen=True)
class MeanPolarity:
    mean: float
    n: int


def mean_polarity(texts: Iterable[str]) -> MeanPolarity:
    """The mean polarity of the non-empty texts, and how many there were."""
    values = [polarity(t) for t in texts if t.strip()]
    return MeanPolarity(sum(values) / len(values) if values else math.nan, len(values))
