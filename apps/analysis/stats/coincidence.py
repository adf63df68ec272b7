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
    """d2(c, k) at the level of measurement; ordinal distances use the marginals. With a
    stack of marginals (R x V), a stack of distances (R x V x V)."""
    size = len(values)
    if level == "nominal":
        return np.broadcast_to(1.0 - np.eye(size), (*marginals.shape[:-1], size, size))
    if level == "interval":
        out = np.subtract.outer(values, values) ** 2
        return np.broadcast_to(out, (*marginals.shape[:-1], size, size))
    if level == "ratio":
        sums = np.add.outer(values, values)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.nan_to_num((np.subtract.outer(values, values) / sums) ** 2)
        return np.broadcast_to(out, (*marginals.shape[:-1], size, size))
    if level == "ordinal":
        zero = np.zeros((*marginals.shape[:-1], 1))
        cumulative = np.concatenate([zero, np.cumsum(marginals, axis=-1)], axis=-1)
        low = np.minimum.outer(range(size), range(size))
        high = np.maximum.outer(range(size), range(size))
        between = cumulative[..., high + 1] - cumulative[..., low]
        return (between - (marginals[..., low] + marginals[..., high]) / 2) ** 2
    raise ValueError(f"unknown level {level!r}")


def alphas_from_coincidences(stack: FloatArray, values: FloatArray, level: str) -> FloatArray:
    """Alpha of each summed V x V coincidence matrix of a stack (R x V x V) at once; NaN where
    expected disagreement is 0 or there is no pair."""
    marginals = stack.sum(axis=-1)
    n = marginals.sum(axis=-1)
    distance = squared_distance(level, values, marginals)
    expected = np.einsum("rc,rk,rck->r", marginals, marginals, distance)
    observed = (stack * distance).sum(axis=(-2, -1))
    defined = (n > 1) & (expected > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        alphas = 1.0 - (n - 1) * observed / expected
    return np.where(defined, alphas, np.nan)


def alpha_from_coincidences(coincidences: FloatArray, values: FloatArray, level: str) -> float:
    """Alpha from a summed V x V coincidence matrix; NaN when expected disagreement is 0."""
    return float(alphas_from_coincidences(coincidences[None], values, level)[0])


def _resample_weights(units: int, n_resamples: int, seed: int) -> FloatArray:
    """How often each unit is drawn in each resample (n_resamples x units), seeded."""
    rng = np.random.default_rng(seed)
    weights = rng.multinomial(units, np.full(units, 1 / units), size=n_resamples)
    return weights.astype(np.float64)


def _percentile_interval(draws: FloatArray, confidence: float = 0.95) -> tuple[float, float]:
    draws = draws[~np.isnan(draws)]
    if draws.size == 0:
        return (math.nan, math.nan)
    tail = (1.0 - confidence) / 2.0 * 100.0
    low, high = np.percentile(draws, [tail, 100.0 - tail])
    return (float(low), float(high))


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
    weights = _resample_weights(len(flat), n_resamples, seed)
    sums = (weights @ flat).reshape(n_resamples, len(values), len(values))
    low, high = _percentile_interval(alphas_from_coincidences(sums, values, level), confidence)
    return (point, low, high)


def alpha_changes_bootstrap(
    matrix: FloatArray, level: str, n_resamples: int, seed: int
) -> list[tuple[float, float, float]]:
    """For each rater (row): (change, low, high), alpha without the rater minus alpha with
    every rater, and a percentile 95% interval resampling the pairable units (one draw of
    units for all raters and both alphas, so each interval is the change's own). Resamples
    where either alpha is undefined are dropped; NaN when the change is undefined."""
    values = np.unique(matrix[~np.isnan(matrix)])
    pairable = (~np.isnan(matrix)).sum(axis=0) >= 2
    if values.size < 2 or not pairable.any():
        return [(math.nan, math.nan, math.nan)] * matrix.shape[0]
    kept = matrix[:, pairable]
    shape = (len(values), len(values))
    full = coincidences_over(kept, values).reshape(kept.shape[1], -1)
    weights = np.vstack(
        [np.ones(kept.shape[1]), _resample_weights(kept.shape[1], n_resamples, seed)]
    )
    with_all = alphas_from_coincidences((weights @ full).reshape(-1, *shape), values, level)
    out = []
    for row in range(kept.shape[0]):
        without = coincidences_over(np.delete(kept, row, axis=0), values).reshape(len(full), -1)
        changes = alphas_from_coincidences((weights @ without).reshape(-1, *shape), values, level)
        changes = changes - with_all
        point = float(changes[0])
        if math.isnan(point):
            out.append((point, math.nan, math.nan))
        else:
            out.append((point, *_percentile_interval(changes[1:])))
    return out
