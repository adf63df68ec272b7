"""Sentiment polarity of judge justifications (methods §5), with TextBlob.

TextBlob's default analyser (the pattern lexicon, `en-sentiment.xml`) ships inside its wheel
and needs no NLTK corpora, so it works offline; nothing is downloaded. Polarity runs from -1
(negative) to 1 (positive); a text with no word of the lexicon scores 0.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import stats
from textblob.en.sentiments import PatternAnalyzer


@lru_cache(maxsize=1)
def _analyzer() -> PatternAnalyzer:
    return PatternAnalyzer()


@lru_cache(maxsize=100_000)  # reruns and cached calls repeat the same replies
def polarity(text: str) -> float:
    """TextBlob's polarity of one text (what ``TextBlob(text).sentiment.polarity`` gives);
    about a millisecond for a reply of a hundred words."""
    return float(_analyzer().analyze(text).polarity)


@dataclass(frozen=True)
class MeanPolarity:
    mean: float
    n: int
    ci_low: float = math.nan
    ci_high: float = math.nan


def mean_polarity(texts: Iterable[str], *, n_resamples: int = 1000) -> MeanPolarity:
    """The mean polarity of the non-empty texts, how many there were, and a percentile
    bootstrap 95% interval of the mean over texts (none below two texts)."""
    values = np.array([polarity(t) for t in texts if t.strip()], dtype=float)
    if values.size == 0:
        return MeanPolarity(math.nan, 0)
    mean = float(values.mean())
    if values.size < 2 or np.all(values == values[0]):
        low = high = mean if values.size >= 2 else math.nan
        return MeanPolarity(mean, int(values.size), low, high)
    ci = stats.bootstrap(
        (values,), np.mean, n_resamples=n_resamples, method="percentile", rng=0
    ).confidence_interval
    return MeanPolarity(mean, int(values.size), float(ci.low), float(ci.high))
