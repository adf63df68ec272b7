"""Krippendorff's alpha from coincidence matrices, for fast bootstrap intervals.

Each pairable unit u contributes a coincidence matrix O_u[c, k] = m_uc (m_uk - [c = k]) /
(m_u - 1), where m_uc counts the unit's ratings of value c. Alpha only needs their sum O:
with n_c = sum_k O[c, k] and n = sum_c n_c,

    alpha = 1 - (n - 1) * sum_ck O[c, k] d2(c, k) / sum_ck n_c n_k d2(c, k)

(Krippendorff 2011). A bootstrap resample of units is then a weighted sum of the O_u: all
resamples at once are one matrix product, instead of recomputing alpha from raw ratings a
thousand times. Point values equal the `krippendorff` package's (tested).
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]


def unit_coincidences(matrix: FloatArray) -> tuple[FloatArray, FloatArray]:
    """(sorted values, O_u for every pairable unit: units x V x V) of a raters x units matrix
    of numeric codes with NaN for missing ratings."""
    values = np.unique(matrix[~np.isnan(matrix)])
    if values.size == 0:
        return values, np.zeros((0, 0, 0))
    per_unit = coincidences_over(matrix, values)
    return values, per_unit[(~np.isnan(matrix)).sum(axis=0) >= 2]


def coincidences_over(matrix: FloatArray, values: FloatArray) -> FloatArray:
    """O_u of every unit (units x V x V) over the given values; a unit with fewer than two
    ratings gets zeros (it adds nothing), so two matrices over the same units line up."""
    counts = np.stack([(matrix == v).sum(axis=0) for v in values], axis=1).astype(np.float64)
    totals = counts.sum(axis=1)
    pairs = np.where(totals >= 2, totals - 1, np.inf)  # 1 / inf: no pair, no coincidence
    eye = np.eye(len(values))
    return counts[:, :, None] * (counts[:, None, :] - eye) / pairs[:, None, None]


def squared_distance(level: str, values: FloatArray, marginals: FloatArray) -> FloatArray:
    """d2(c, k) at the level of measurement; ordinal distances use the marginals."""
    if level == "nominal":
        return 1.0 - np.eye(len(values))
    if level == "interval":
        return np.subtract.outer(values, values) ** 2
    if level == "ratio":
        sums = np.add.outer(values, values)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = (np.subtract.outer(values, values) / sums) ** 2
        return np.nan_to_num(out)
    if level == "ordinal":
        cumulative = np.concatenate([[0.0], np.cumsum(marginals)])
        low, high = (
            np.minimum.outer(range(len(values)), range(len(values))),
            np.maximum.outer(range(len(values)), range(len(values))),
        )
        between = cumulative[high + 1] - cumulative[low]
        return (between - (marginals[low] + marginals[high]) / 2) ** 2
    raise ValueError(f"unknown level {level!r}")


def alpha_from_coincidences(coincidences: FloatArray, values: FloatArray, level: str) -> float:
    """Alpha from a summed V x V coincidence matrix; NaN when expected disagreement is 0."""
    marginals = coincidences.sum(axis=1)
    n = marginals.sum()
    distance = squared_distance(level, values, marginals)
    expected = float((np.outer(marginals, marginals) * distance).sum())
    if n <= 1 or expected == 0.0:
        return math.nan
    return 1.0 - (n - 1) * float((coincidences * distance).sum()) / expected


def alpha_bootstrap(
    matrix: FloatArray, level: str, n_resamples: int, seed: int, confidence: float = 0.95
) -> tuple[float, float, float]:
    """(alpha, low, high): the point value and a percentile interval resampling the pairable
    units with replacement (raters fixed); undefined resamples are dropped."""
    values, per_unit = unit_coincidences(matrix)
    if len(per_unit) == 0 or len(values) < 2:
        return (math.nan, math.nan, math.nan)
    flat = per_unit.reshape(len(per_unit), -1)
    point = alpha_from_coincidences(flat.sum(axis=0).reshape(len(values), -1), values, level)
    rng = np.random.default_rng(seed)
    weights = rng.multinomial(len(flat), np.full(len(flat), 1 / len(flat)), size=n_resamples)
    sums = (weights @ flat).reshape(n_resamples, len(values), len(values))
    draws = np.array([alpha_from_coincidences(s, values, level) for s in sums])
    draws = draws[~np.isnan(draws)]
    if draws.size == 0:
        return (point, math.nan, math.nan)
    tail = (1.0 - confidence) / 2.0 * 100.0
    low, high = np.percentile(draws, [tail, 100.0 - tail])
    return (point, float(low), float(high))


def alpha_change_bootstrap(
    matrix: FloatArray, row: int, level: str, n_resamples: int, seed: int
) -> tuple[float, float, float]:
    """(change, low, high): alpha without rater ``row`` minus alpha with every rater, and a
    percentile 95% interval resampling the pairable units (the same draw for both alphas, so
    the interval is the change's own). Resamples where either alpha is undefined are
    dropped; NaN when the change itself is undefined."""
    values = np.unique(matrix[~np.isnan(matrix)])
    pairable = (~np.isnan(matrix)).sum(axis=0) >= 2
    if values.size < 2 or not pairable.any():
        return (math.nan, math.nan, math.nan)
    kept = matrix[:, pairable]
    size = len(values) * len(values)
    full = coincidences_over(kept, values).reshape(-1, size)
    without = coincidences_over(np.delete(kept, row, axis=0), values).reshape(-1, size)

    def change(weights: FloatArray) -> FloatArray:
        sums = [(weights @ part).reshape(-1, len(values), len(values)) for part in (full, without)]
        alpha = [[alpha_from_coincidences(o, values, level) for o in part] for part in sums]
        return np.array(alpha[1]) - np.array(alpha[0])

    point = float(change(np.ones((1, len(full))))[0])
    if math.isnan(point):
        return (point, math.nan, math.nan)
    rng = np.random.default_rng(seed)
    weights = rng.multinomial(len(full), np.full(len(full), 1 / len(full)), size=n_resamples)
    draws = change(weights.astype(np.float64))
    draws = draws[~np.isnan(draws)]
    if draws.size == 0:
        return (point, math.nan, math.nan)
    low, high = np.percentile(draws, [2.5, 97.5])
    return (point, float(low), float(high))
