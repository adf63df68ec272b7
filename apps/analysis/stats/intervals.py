"""Intervals for the figures a report shows (methods §8: every figure with its N and an interval).

- A **share** (a failure rate, an attack success rate, a match rate, a vote share) gets the
  Wilson score interval of a binomial proportion, from scipy (``binomtest(...).proportion_ci``).
- A **mean** (a score delta over items, the S_T or S_F deltas over cells) gets a percentile
  bootstrap interval over its units, from ``scipy.stats.bootstrap``, seeded so a report is the
  same every time it is built.

Both are 95% intervals. With no unit the estimate and its interval are NaN; a mean of one
unit has no interval (NaN bounds).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt
from scipy import stats

CONFIDENCE: Final = 0.95
RESAMPLES: Final = 2000
SEED: Final = 0


@dataclass(frozen=True)
class Estimate:
    """A figure with its 95% interval and the number of units behind it."""

    value: float
    ci_low: float
    ci_high: float
    n: int


def share_interval(successes: int, n: int, confidence: float = CONFIDENCE) -> Estimate:
    """``successes / n`` with its Wilson score interval."""
    if not 0 <= successes <= n:
        raise ValueError("successes must lie in [0, n]")
    if n == 0:
        return Estimate(math.nan, math.nan, math.nan, 0)
    ci = stats.binomtest(successes, n).proportion_ci(confidence_level=confidence, method="wilson")
    return Estimate(successes / n, float(ci.low), float(ci.high), n)


def share_of(flags: npt.ArrayLike, confidence: float = CONFIDENCE) -> Estimate:
    """The share of true values among ``flags`` (NaN entries dropped), with its interval."""
    values = np.asarray(flags, dtype=np.float64)
    values = values[~np.isnan(values)]
    return share_interval(int(values.sum()), int(values.size), confidence)


def mean_interval(
    values: npt.ArrayLike,
    confidence: float = CONFIDENCE,
    n_resamples: int = RESAMPLES,
    seed: int = SEED,
) -> Estimate:
    """The mean of ``values`` (NaN dropped) with a percentile bootstrap interval over them."""
    data = np.asarray(values, dtype=np.float64)
    data = data[~np.isnan(data)]
    if data.size == 0:
        return Estimate(math.nan, math.nan, math.nan, 0)
    mean = float(data.mean())
    if data.size == 1:
        return Estimate(mean, math.nan, math.nan, 1)
    if np.ptp(data) == 0:
        return Estimate(mean, mean, mean, int(data.size))
    result = stats.bootstrap(
        (data,),
        np.mean,
        confidence_level=confidence,
        n_resamples=n_resamples,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    ci = result.confidence_interval
    return Estimate(mean, float(ci.low), float(ci.high), int(data.size))
