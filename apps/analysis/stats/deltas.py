"""Score deltas, S_T / S_F cells and aspect confusion (methods §1, Hu et al. 2024).

``delta(p, c) = mean_k(score(original_k, c) - score(p(original_k), c))``: positive when the
judge scores perturbed texts lower. A missing score (NaN, e.g. an unparsed judge output)
drops its pair, never the whole cell.
"""

import math
from collections.abc import Hashable, Mapping
from typing import Literal, TypeVar

import numpy as np
import numpy.typing as npt
from scipy import stats

from apps.analysis.stats.comparisons import AFFECTED, NOT_AFFECTED, Verdict
from apps.analysis.stats.intervals import Estimate, mean_interval

CellClass = Literal["S_T", "S_F", "neither"]
FloatArray = npt.NDArray[np.float64]

K = TypeVar("K", bound=Hashable)


def score_delta(orig_scores: npt.ArrayLike, pert_scores: npt.ArrayLike) -> float:
    """Mean paired difference original - perturbed over pairs where both scores exist."""
    orig = np.asarray(orig_scores, dtype=np.float64)
    pert = np.asarray(pert_scores, dtype=np.float64)
    if orig.shape != pert.shape:
        raise ValueError("original and perturbed scores must be paired (same shape)")
    diff = orig - pert
    diff = diff[~np.isnan(diff)]
    return float(diff.mean()) if diff.size else math.nan


def score_delta_estimate(orig_scores: npt.ArrayLike, pert_scores: npt.ArrayLike) -> Estimate:
    """:func:`score_delta` with a bootstrap 95% interval over the items with both scores."""
    orig = np.asarray(orig_scores, dtype=np.float64)
    pert = np.asarray(pert_scores, dtype=np.float64)
    value = score_delta(orig, pert)
    estimate = mean_interval(orig - pert)
    return Estimate(value, estimate.ci_low, estimate.ci_high, estimate.n)


def classify_cell(expected: Verdict, human: Verdict | None) -> CellClass:
    """S_T when expectation and humans both say affected, S_F when both say not affected."""
    if expected == human == AFFECTED:
        return "S_T"
    if expected == human == NOT_AFFECTED:
        return "S_F"
    return "neither"


def classify_cells(
    expected: Mapping[K, Verdict], human: Mapping[K, Verdict | None]
) -> dict[K, CellClass]:
    """:func:`classify_cell` for every expected cell; a cell without a human verdict is
    "neither"."""
    return {key: classify_cell(value, human.get(key)) for key, value in expected.items()}


def split_deltas(
    deltas: Mapping[K, float], classes: Mapping[K, CellClass]
) -> tuple[list[float], list[float]]:
    """The deltas of the S_T cells and of the S_F cells (for the box plots), NaN dropped."""
    s_t = [d for key, d in deltas.items() if classes.get(key) == "S_T" and not math.isnan(d)]
    s_f = [d for key, d in deltas.items() if classes.get(key) == "S_F" and not math.isnan(d)]
    return s_t, s_f


def aspect_correlation_matrix(scores: npt.ArrayLike) -> FloatArray:
    """Pearson correlation between aspects (columns) over texts (rows), NaN-safe.

    Each pair of aspects uses the texts scored on both (pairwise complete). A pair with fewer
    than two such texts, or where either aspect is constant on them, is NaN; the diagonal is
    1 where the aspect varies, else NaN.
    """
    matrix = np.asarray(scores, dtype=np.float64)
    if matrix.ndim != 2:
        raise ValueError("scores must be 2-D: texts x aspects")
    n_aspects = matrix.shape[1]
    out = np.full((n_aspects, n_aspects), np.nan)
    for i in range(n_aspects):
        for j in range(i, n_aspects):
            out[i, j] = out[j, i] = _pearson(matrix[:, i], matrix[:, j])
    return out


def _pearson(x: FloatArray, y: FloatArray) -> float:
    both = ~(np.isnan(x) | np.isnan(y))
    if both.sum() < 2 or np.ptp(x[both]) == 0 or np.ptp(y[both]) == 0:
        return math.nan
    dx = x[both] - x[both].mean()
    dy = y[both] - y[both].mean()
    denominator = math.sqrt(float((dx * dx).sum()) * float((dy * dy).sum()))
    return max(-1.0, min(1.0, float((dx * dy).sum()) / denominator))


def cell_mean_estimate(
    item_deltas: npt.ArrayLike, n_resamples: int = 2000, seed: int = 0
) -> Estimate:
    """The mean delta of a group of cells (e.g. the S_T cells of one description type) with a
    percentile bootstrap 95% interval over **items**.

    ``item_deltas`` has shape (cells, items): each cell's delta on each item (the mean over
    the item's perturbations of that kind), NaN where the cell has no pair for the item. The
    value is the mean over cells of each cell's mean over its items; a resample draws items
    with replacement and recomputes every cell. ``n`` counts the items.
    """
    matrix = np.asarray(item_deltas, dtype=np.float64)
    if matrix.ndim != 2:
        raise ValueError("expected item deltas of shape (cells, items)")
    matrix = matrix[~np.isnan(matrix).all(axis=1)][:, ~np.isnan(matrix).all(axis=0)]
    if matrix.size == 0:
        return Estimate(math.nan, math.nan, math.nan, 0)
    value = _mean_of_cells(matrix)
    n_items = matrix.shape[1]
    if n_items < 2:
        return Estimate(value, math.nan, math.nan, n_items)
    if np.nanmax(matrix) == np.nanmin(matrix):
        return Estimate(value, value, value, n_items)
    result = stats.bootstrap(
        (np.arange(n_items),),
        lambda items: _mean_of_cells(matrix[:, items]),
        vectorized=False,
        n_resamples=n_resamples,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    ci = result.confidence_interval
    return Estimate(value, float(ci.low), float(ci.high), n_items)


def _mean_of_cells(matrix: FloatArray) -> float:
    valid = ~np.isnan(matrix)
    counts = valid.sum(axis=1)
    if not (counts > 0).any():
        return math.nan
    sums = np.where(valid, matrix, 0.0).sum(axis=1)
    return float((sums[counts > 0] / counts[counts > 0]).mean())


def mean_off_diagonal(correlations: npt.ArrayLike) -> float:
    """The mean of a correlation matrix's defined off-diagonal cells (NaN if none)."""
    matrix = np.asarray(correlations, dtype=np.float64)
    values = matrix[~np.eye(matrix.shape[0], dtype=bool)]
    values = values[np.isfinite(values)]
    return float(values.mean()) if values.size else math.nan


def aspect_confusion(
    judge_scores: npt.ArrayLike,
    human_scores: npt.ArrayLike,
    n_resamples: int = 500,
    seed: int = 0,
) -> Estimate:
    """Judge minus human mean off-diagonal correlation between aspects (docs/cards.md): above
    0, the judge mixes the aspects up more than people do. Both are texts x aspects matrices
    over the same aspects (NaN: not scored). The 95% interval is a percentile bootstrap
    resampling the judge's texts and the people's texts independently (seeded); N is the
    judge's texts. Replicates where either mean is undefined are dropped."""
    judge = np.asarray(judge_scores, dtype=np.float64)
    human = np.asarray(human_scores, dtype=np.float64)
    observed = mean_off_diagonal(aspect_correlation_matrix(judge)) - mean_off_diagonal(
        aspect_correlation_matrix(human)
    )
    n = int(judge.shape[0])
    if math.isnan(observed) or n < 2 or human.shape[0] < 2:
        return Estimate(observed, math.nan, math.nan, n)
    rng = np.random.default_rng(seed)
    replicates = []
    for _ in range(n_resamples):
        j = judge[rng.integers(0, n, n)]
        h = human[rng.integers(0, human.shape[0], human.shape[0])]
        value = mean_off_diagonal(aspect_correlation_matrix(j)) - mean_off_diagonal(
            aspect_correlation_matrix(h)
        )
        if not math.isnan(value):
            replicates.append(value)
    if len(replicates) < n_resamples // 2:
        return Estimate(observed, math.nan, math.nan, n)
    low, high = np.percentile(replicates, [2.5, 97.5])
    return Estimate(observed, float(low), float(high), n)
