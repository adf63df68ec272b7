"""Intervals for the figures a report shows (methods §8: every figure with its N and an interval).

- A **share** (a failure rate, an attack success rate, a match rate, a vote share) gets the
  Wilson score interval of a binomial proportion, from scipy (``binomtest(...).proportion_ci``).
- A **median** (time on task) gets the distribution-free interval between two order
  statistics, from the binomial (``scipy.stats.quantile_test``); too few values to reach 95%
  (fewer than 6) give NaN bounds.
- A **mean** (a score delta over items, the S_T or S_F deltas over cells) gets a percentile
  bootstrap interval over its units, from ``scipy.stats.bootstrap``, seeded so a report is the
  same every time it is built.

Both are 95% intervals. With no unit the estimate and its interval are NaN; a mean of one
unit has no interval (NaN bounds).

**Clustered units.** One text often yields several units (a perturbed text scored on 11
criteria gives 11 flags), and a judge's verdicts on one text are not independent. Treating
them as such makes an interval far too narrow. So:

- a clustered **share** (:func:`clustered_share`) is the mean over clusters (texts) of each
  text's share, with the Wilson interval over the *texts*: each text counts once. The variance
  of per-text shares is at most ``p(1 - p)``, so this interval is never too narrow; it is wider
  than needed when a text's units happen to be independent. A cluster bootstrap is not used for
  shares: a share of 0 or 1 (a perfect judge) would get a zero-width interval;
- a clustered **mean** (:func:`clustered_mean`) gets a cluster bootstrap: texts are resampled
  with all their units (percentile interval, seeded).

Both report ``n`` (units) and ``clusters`` (texts).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
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
    #: Independent clusters (texts) behind the interval when units are clustered; 0: none
    #: (every unit independent, so the interval counts ``n``).
    clusters: int = 0

    @property
    def effective_n(self) -> int:
        """What the interval counts: the clusters when there are any, else the units."""
        return self.clusters or self.n


def share_interval(successes: int, n: int, confidence: float = CONFIDENCE) -> Estimate:
    """``successes / n`` with its Wilson score interval."""
    if not 0 <= successes <= n:
        raise ValueError("successes must lie in [0, n]")
    if n == 0:
        return Estimate(math.nan, math.nan, math.nan, 0)
    ci = stats.binomtest(successes, n).proportion_ci(confidence_level=confidence, method="wilson")
    return Estimate(successes / n, float(ci.low), float(ci.high), n)


def wilson(successes: float, n: float, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The Wilson score interval of ``successes / n``; both may be fractional (a share of
    clusters whose members are shares). Equal to scipy's for whole numbers."""
    if n <= 0:
        return math.nan, math.nan
    z = float(stats.norm.ppf(0.5 + confidence / 2))
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    low = 0.0 if p <= 0 else max(0.0, centre - half)
    return low, 1.0 if p >= 1 else min(1.0, centre + half)


def _grouped(values: npt.ArrayLike, clusters: Sequence[Hashable]) -> list[np.ndarray]:
    data = np.asarray(values, dtype=np.float64)
    if data.shape[0] != len(clusters):
        raise ValueError("every unit needs its cluster")
    groups: dict[Hashable, list[float]] = {}
    for value, cluster in zip(data.tolist(), clusters, strict=True):
        if not math.isnan(value):
            groups.setdefault(cluster, []).append(value)
    return [np.asarray(v) for v in groups.values()]


def clustered_share(
    flags: npt.ArrayLike, clusters: Sequence[Hashable], confidence: float = CONFIDENCE
) -> Estimate:
    """The share of true ``flags`` when units come in clusters (several criteria of one
    text): the mean of each cluster's share, with the Wilson interval over the clusters
    (each counts once). NaN flags are dropped. With one unit per cluster it is
    :func:`share_interval` exactly."""
    groups = _grouped(flags, clusters)
    n = sum(len(g) for g in groups)
    k = len(groups)
    if k == 0:
        return Estimate(math.nan, math.nan, math.nan, 0, 0)
    value = float(np.mean([g.mean() for g in groups]))
    low, high = wilson(value * k, k, confidence)
    return Estimate(value, low, high, n, k)


def clustered_mean(
    values: npt.ArrayLike,
    clusters: Sequence[Hashable],
    confidence: float = CONFIDENCE,
    n_resamples: int = RESAMPLES,
    seed: int = SEED,
) -> Estimate:
    """The mean of ``values`` (NaN dropped) over every unit, with a percentile cluster
    bootstrap: clusters are drawn with replacement, each bringing all its units. With one
    cluster there is no interval."""
    groups = _grouped(values, clusters)
    n, k = sum(len(g) for g in groups), len(groups)
    if n == 0:
        return Estimate(math.nan, math.nan, math.nan, 0, 0)
    sums = np.array([g.sum() for g in groups])
    sizes = np.array([len(g) for g in groups], dtype=np.float64)
    mean = float(sums.sum() / sizes.sum())
    if k == 1:
        return Estimate(mean, math.nan, math.nan, n, 1)
    draws = np.random.default_rng(seed).integers(0, k, size=(n_resamples, k))
    means = sums[draws].sum(axis=1) / sizes[draws].sum(axis=1)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return Estimate(mean, float(low), float(high), n, k)


def perfect_share_bound(clusters: int, perfect: float, confidence: float = CONFIDENCE) -> float:
    """The interval end nearest the threshold that a perfect judge would reach on
    ``clusters`` texts: its share is ``perfect`` (0 or 1) on every text, so its Wilson
    interval is [0, high] or [low, 1]; this returns that high (or low)."""
    low, high = wilson(perfect * clusters, clusters, confidence)
    return high if perfect == 0 else low


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


def median_interval(values: npt.ArrayLike, confidence: float = CONFIDENCE) -> Estimate:
    """The median of ``values`` (NaN dropped) with the order-statistic interval (see above)."""
    data = np.asarray(values, dtype=np.float64)
    data = data[~np.isnan(data)]
    if data.size == 0:
        return Estimate(math.nan, math.nan, math.nan, 0)
    median = float(np.median(data))
    ci = stats.quantile_test(data, q=median, p=0.5).confidence_interval(confidence)
    return Estimate(median, float(ci.low), float(ci.high), int(data.size))
