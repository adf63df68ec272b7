"""Sentiment polarity of judge justifications (methods §5), with TextBlob.

TextBlob's default analyser (the pattern lexicon, `en-sentiment.xml`) ships inside its wheel
and needs no NLTK corpora, so it works offline; nothing is downloaded. Polarity runs from -1
(negative) to 1 (positive); a text with no word of the lexicon scores 0.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping
from functools import lru_cache
from typing import TypeVar

from textblob.en.sentiments import PatternAnalyzer

from apps.analysis.stats.intervals import Estimate, clustered_mean, mean_interval

K = TypeVar("K", bound=Hashable)


@lru_cache(maxsize=1)
def _analyzer() -> PatternAnalyzer:
    return PatternAnalyzer()


@lru_cache(maxsize=100_000)  # reruns and cached calls repeat the same replies
def polarity(text: str) -> float:
    """TextBlob's polarity of one text (what ``TextBlob(text).sentiment.polarity`` gives);
    about a millisecond for a reply of a hundred words."""
    return float(_analyzer().analyze(text).polarity)


def polarity_estimate(replies: Mapping[K, Iterable[str]]) -> Estimate:
    """The mean polarity of every non-empty reply, replies grouped by the text they judge
    (several criteria, samples): a percentile cluster bootstrap over the texts, each
    resampled with all its replies. ``n``: replies, ``clusters``: texts."""
    values, texts = [], []
    for text, found in sorted(replies.items(), key=lambda kv: str(kv[0])):
        for reply in found:
            if reply.strip():
                values.append(polarity(reply))
                texts.append(text)
    return clustered_mean(values, texts)


def polarity_shift(
    with_cue: Mapping[K, Iterable[str]], without: Mapping[K, Iterable[str]]
) -> Estimate:
    """The mean over texts of (mean polarity of the text's replies with the cue − without it),
    over the texts with a non-empty reply under both, with a percentile bootstrap over those
    texts (``n``: texts)."""
    shifts = []
    for text in sorted(with_cue.keys() & without.keys(), key=str):
        cue, plain = _mean(with_cue[text]), _mean(without[text])
        if not (math.isnan(cue) or math.isnan(plain)):
            shifts.append(cue - plain)
    return mean_interval(shifts)


def _mean(replies: Iterable[str]) -> float:
    values = [polarity(r) for r in replies if r.strip()]
    return sum(values) / len(values) if values else math.nan
