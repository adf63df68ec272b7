"""Paired comparisons of two judges (or strategies) on the same units (docs/cards.md).

Judges side by side are measured on the same perturbations, texts and kinds, so their
figures are compared pairwise, unit by unit:

- **detection** of the same perturbations (detected or not, per judge): the exact McNemar
  test, a two-sided binomial test on the discordant pairs (:func:`mcnemar_exact`);
- a **rate or mean** over the same units (agreement with humans, failure flags): the paired
  bootstrap of the difference of means, percentile interval, seeded
  (:func:`paired_bootstrap`);
- **per-kind discernment** D of the two judges: the two-sided Wilcoxon signed-rank test over
  the kinds (:func:`wilcoxon_paired`).

Every result carries the difference (first minus second), its 95% interval, the number of
pairs N and a two-sided p-value. A family of comparisons is corrected with Holm's step-down
method (:func:`holm`, controls the family-wise error) or Benjamini-Hochberg's
(:func:`benjamini_hochberg`, controls the false discovery rate).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import stats

from apps.analysis.stats.intervals import CONFIDENCE, RESAMPLES, SEED, mean_interval


@dataclass(frozen=True)
class PairedResult:
    """One paired comparison: ``difference`` is first minus second, with its 95% interval,
    ``n`` pairs and a two-sided ``p``. ``test`` names the test used."""

    test: str
    difference: float
    ci_low: float
    ci_high: float
    n: int
    p: float


NO_PAIRS = "no pairs"


def _pairs(first: npt.ArrayLike, second: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(first, dtype=np.float64)
    b = np.asarray(second, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError("the two judges' values must be paired (same shape)")
    keep = np.isfinite(a) & np.isfinite(b)
    return a[keep], b[keep]


def _empty(test: str) -> PairedResult:
    return PairedResult(test, math.nan, math.nan, math.nan, 0, math.nan)


def mcnemar_exact(first: Sequence[bool | None], second: Sequence[bool | None]) -> PairedResult:
    """Exact McNemar test of two judges' detections of the same units.

    ``first[i]`` and ``second[i]`` say whether each judge detected unit i (None: not
    measured, the pair is dropped). With b = units only the first detected and c = units only
    the second detected, p is the two-sided binomial test of b against Binomial(b + c, 1/2);
    no discordant pair gives p = 1. The difference of detection rates, (b - c) / n, gets the
    percentile bootstrap interval over the pairs (seeded).
    """
    if len(first) != len(second):
        raise ValueError("the two judges' detections must be paired (same length)")
    pairs = [(bool(x), bool(y)) for x, y in zip(first, second, strict=True) if None not in (x, y)]
    if not pairs:
        return _empty("McNemar (exact)")
    b = sum(x and not y for x, y in pairs)
    c = sum(y and not x for x, y in pairs)
    p = 1.0 if b + c == 0 else float(stats.binomtest(b, b + c, 0.5).pvalue)
    a = np.array([float(x) for x, _ in pairs])
    d = np.array([float(y) for _, y in pairs])
    spread = mean_interval(a - d)
    low, high = spread.ci_low, spread.ci_high
    return PairedResult("McNemar (exact)", (b - c) / len(pairs), low, high, len(pairs), p)


def paired_bootstrap(
    first: npt.ArrayLike,
    second: npt.ArrayLike,
    n_resamples: int = RESAMPLES,
    seed: int = SEED,
) -> PairedResult:
    """Difference of the means of two judges' values on the same units (a rate when the
    values are 0/1 flags), with the percentile bootstrap interval over the pairs.

    Pairs with a missing value (NaN) are dropped. Resampling pairs is resampling their
    differences, so the interval is ``scipy.stats.bootstrap`` of the mean difference. The
    two-sided p is the share of bootstrap means, shifted to a zero mean (the null), at least
    as far from 0 as the observed difference, counted as (1 + k) / (1 + R) so it is never 0.
    """
    a, b = _pairs(first, second)
    test = "paired bootstrap"
    if a.size == 0:
        return _empty(test)
    differences = a - b
    observed = float(differences.mean())
    if a.size == 1:
        return PairedResult(test, observed, math.nan, math.nan, 1, math.nan)
    if np.ptp(differences) == 0:
        return PairedResult(
            test, observed, observed, observed, int(a.size), 1.0 if observed == 0 else 0.0
        )
    result = stats.bootstrap(
        (differences,),
        np.mean,
        confidence_level=CONFIDENCE,
        n_resamples=n_resamples,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    means = np.asarray(result.bootstrap_distribution)
    extreme = int(np.sum(np.abs(means - observed) >= abs(observed) - 1e-12))
    p = (1 + extreme) / (1 + means.size)
    ci = result.confidence_interval
    return PairedResult(test, observed, float(ci.low), float(ci.high), int(a.size), min(p, 1.0))


def wilcoxon_paired(
    first: npt.ArrayLike,
    second: npt.ArrayLike,
    n_resamples: int = RESAMPLES,
    seed: int = SEED,
) -> PairedResult:
    """Two-sided Wilcoxon signed-rank test (scipy) of two judges' values on the same units,
    e.g. each kind's discernment D. Pairs with a missing or infinite value are dropped; all
    differences zero gives p = 1. The difference is the mean difference, with its percentile
    bootstrap interval over the pairs."""
    a, b = _pairs(first, second)
    test = "Wilcoxon signed-rank"
    if a.size == 0:
        return _empty(test)
    differences = a - b
    if np.all(differences == 0):
        p = 1.0
    else:
        p = float(stats.wilcoxon(a, b, alternative="two-sided").pvalue)
    spread = mean_interval(differences, n_resamples=n_resamples, seed=seed)
    low, high = spread.ci_low, spread.ci_high
    return PairedResult(test, float(differences.mean()), low, high, int(a.size), p)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (family-wise error), in the input's order.

    Sorted ascending, the i-th smallest (0-based) of m becomes ``max_{j<=i} (m - j) p_(j)``,
    capped at 1. NaN p-values are left out of the family and stay NaN."""
    indexed = sorted((p, i) for i, p in enumerate(p_values) if not math.isnan(p))
    m = len(indexed)
    adjusted = [math.nan] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(indexed):
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[i] = running
    return adjusted


def benjamini_hochberg(p_values: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values (false discovery rate), in the input's order:
    the i-th smallest of m becomes ``min_{j>=i} m p_(j) / (j + 1)``, capped at 1. NaN
    p-values are left out of the family and stay NaN."""
    indexed = sorted((p, i) for i, p in enumerate(p_values) if not math.isnan(p))
    m = len(indexed)
    adjusted = [math.nan] * len(p_values)
    running = 1.0
    for rank in range(m - 1, -1, -1):
        p, i = indexed[rank]
        running = min(running, m * p / (rank + 1))
        adjusted[i] = min(1.0, running)
    return adjusted
