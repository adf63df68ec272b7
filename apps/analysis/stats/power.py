"""Power before verdict (docs/cards.md, "The verdict"): the best value a perfect judge could
reach with the data at hand, and how many texts would let it show the effect.

- A **share** (a failure rate, a share of scores kept): a perfect judge's share is 0 (or 1)
  on every text, so its Wilson interval over k texts is [0, z²/(k + z²)] (or its mirror). If
  that end is still on the wrong side of the threshold, no judge could pass on these texts.
- **Discernment D** of a kind: a one-sided Wilcoxon signed-rank test on n pairs cannot give a
  p-value below the one of n pairs all lowered (0.5^n in the exact test), and the metrics'
  p-values combine (harmonic mean p, calibrated) to no less than that. So a perfect judge's D
  is bounded by n and the number of metrics M: with M = 4, one text per kind caps D at 0.13,
  and five are needed to reach D = 1.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from apps.analysis.stats.discernment import (
    Level,
    d_avg,
    d_min,
    discernment,
    hmp_pvalue,
    wilcoxon_p,
)
from apps.analysis.stats.intervals import perfect_share_bound

#: How far the searches for "texts needed" look before giving up.
MAX_TEXTS = 10_000


def share_reaches(texts: int, perfect: float) -> float:
    """The interval end nearest the threshold a perfect judge reaches on ``texts`` texts."""
    return perfect_share_bound(texts, perfect) if texts > 0 else math.nan


def share_texts_needed(threshold: float, perfect: float) -> int | None:
    """The fewest texts on which a perfect judge's interval clears ``threshold`` (a perfect
    share of 0 must bring its high end to or below it, a share of 1 its low end to or above
    it); None when no number of texts would (a threshold of 0 for a rate)."""
    for texts in range(1, MAX_TEXTS):
        reaches = share_reaches(texts, perfect)
        if (reaches <= threshold) if perfect == 0 else (reaches >= threshold):
            return texts
    return None


def best_p(pairs: int) -> float:
    """The smallest one-sided Wilcoxon p-value n pairs can give (every pair lowered)."""
    if pairs <= 0:
        return math.nan
    return wilcoxon_p(np.arange(pairs, dtype=float) + 1.0, np.zeros(pairs))


def best_discernment(pairs: int, metrics: int) -> float:
    """The highest D a perfect judge reaches on a kind with ``pairs`` texts scored both ways
    on each of ``metrics`` metrics (equal weights, the default combination)."""
    if pairs <= 0 or metrics <= 0:
        return math.nan
    return discernment(hmp_pvalue([best_p(pairs)] * metrics))


def pairs_needed(metrics: int, threshold: float) -> int | None:
    """The fewest texts per kind with which a perfect judge reaches D >= ``threshold``."""
    for pairs in range(1, MAX_TEXTS):
        if best_discernment(pairs, metrics) >= threshold:
            return pairs
    return None


def best_d_summary(
    kinds: Mapping[str, tuple[int, int]], levels: Mapping[str, Level]
) -> tuple[float, float]:
    """(D_min, D_avg) a perfect judge reaches, given each kind's (texts, metrics)."""
    best = {kind: best_discernment(n, m) for kind, (n, m) in kinds.items()}
    best = {k: v for k, v in best.items() if not math.isnan(v)}
    graded = {k: v for k, v in best.items() if k in levels}
    lowest = d_min(best) if best else math.nan
    return lowest, (d_avg(graded, {k: levels[k] for k in graded}) if graded else math.nan)
