"""Agreement statistics (methods §8).

Reliability data use the layout of the `krippendorff` package: one row per rater, one column
per unit (item). A missing rating is ``None`` or NaN. Ratings may be numbers or labels
(vetting verdicts, A/B/C/D choices, "low"/"high"...).

Degenerate cases are decided here, not left to a division warning:

- no unit rated by at least two raters: nothing can be compared, every statistic is NaN;
- every pairable rating in one category: expected disagreement is zero, so alpha is 0/0 and
  is returned as NaN ("undefined", not "perfect"); Cohen's kappa likewise when chance
  agreement is 1. Percent agreement stays defined (it is 1.0 there).

Only units with two or more ratings ("pairable" units) enter any statistic; ``n_units`` in an
:class:`AgreementResult` counts those.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import krippendorff
import numpy as np
import numpy.typing as npt
from scipy import stats

from apps.analysis.stats.coincidence import alpha_bootstrap
from apps.analysis.stats.intervals import Estimate, mean_interval

Level = Literal["nominal", "ordinal", "interval", "ratio"]
FloatMatrix = npt.NDArray[np.float64]


def _is_missing(value: object) -> bool:
    """None, NaN, or the string "nan" (how numpy spells NaN inside a string array, and what
    the `krippendorff` package treats as missing there)."""
    if value is None or (isinstance(value, str | np.str_) and value == "nan"):
        return True
    return isinstance(value, float | np.floating) and math.isnan(value)


def as_reliability_array(data: npt.ArrayLike) -> npt.NDArray[np.generic]:
    """``data`` as a 2-D array: numeric dtype when every cell is a number, else ``object``
    (so a list mixing labels and NaN does not become strings)."""
    array = np.asarray(data)
    if array.dtype.kind not in "biuf":
        array = np.asarray(data, dtype=object)
    if array.ndim != 2:
        raise ValueError("reliability data must be 2-D: one row per rater, one column per unit")
    return array


def _is_number(value: object) -> bool:
    return isinstance(value, int | float | np.integer | np.floating)


def encode_ratings(
    data: npt.ArrayLike,
    level: Level = "nominal",
    value_order: Sequence[object] | None = None,
) -> FloatMatrix:
    """Return ``data`` as a float matrix (raters x units) with NaN for a missing rating.

    Numbers are kept as they are, since interval and ratio distances need them. Labels become
    codes: their index in ``value_order`` when given (required for ordinal labels, and the
    only way to give labels an order), otherwise their rank in sorted order, which is allowed
    for the nominal level only, where order carries no meaning.
    """
    array = as_reliability_array(data)
    if value_order is None and array.dtype.kind in "biuf":
        return array.astype(np.float64)
    cells = array.astype(object)
    present = [v for v in cells.flat if not _is_missing(v)]
    codes: dict[object, float] | None
    if value_order is not None:
        codes = {value: float(i) for i, value in enumerate(value_order)}
    elif all(_is_number(v) for v in present):
        codes = None
    elif level == "nominal":
        codes = {value: float(i) for i, value in enumerate(sorted(set(present), key=str))}
    else:
        raise ValueError(f"labels need an ordered value_order at the {level} level")
    out = np.full(cells.shape, np.nan)
    for index, value in np.ndenumerate(cells):
        if _is_missing(value):
            continue
        if codes is None:
            out[index] = float(value)
        elif value in codes:
            out[index] = codes[value]
        else:
            raise ValueError(f"rating {value!r} is not in value_order")
    return out


def pairable_units(matrix: FloatMatrix) -> npt.NDArray[np.bool_]:
    """Mask of the units (columns) that have at least two ratings."""
    return np.asarray((~np.isnan(matrix)).sum(axis=0) >= 2)


def krippendorff_alpha(
    data: npt.ArrayLike,
    level: Level = "nominal",
    value_order: Sequence[object] | None = None,
) -> float:
    """Krippendorff's alpha via the `krippendorff` package, NaN when undefined (see module)."""
    matrix = encode_ratings(data, level, value_order)
    matrix = matrix[:, pairable_units(matrix)]
    if np.unique(matrix[~np.isnan(matrix)]).size < 2:
        return math.nan
    return float(krippendorff.alpha(reliability_data=matrix, level_of_measurement=level))


def unit_agreement_shares(data: npt.ArrayLike) -> FloatMatrix:
    """For each pairable unit, the share of its rater pairs giving the same rating."""
    matrix = encode_ratings(data, "nominal")
    shares = []
    for column in matrix.T:
        ratings = column[~np.isnan(column)]
        n = ratings.size
        if n < 2:
            continue
        _, counts = np.unique(ratings, return_counts=True)
        shares.append((counts * (counts - 1)).sum() / (n * (n - 1)))
    return np.asarray(shares, dtype=np.float64)


def percent_agreement(data: npt.ArrayLike) -> float:
    """Raw pairwise agreement: for each pairable unit, the share of rater pairs giving the
    same rating (exact equality), averaged over units with equal weight per unit."""
    shares = unit_agreement_shares(data)
    return float(shares.mean()) if shares.size else math.nan


def percent_agreement_with_ci(data: npt.ArrayLike, seed: int = 0) -> Estimate:
    """Percent agreement with a percentile bootstrap 95% interval over pairable units."""
    return mean_interval(unit_agreement_shares(data), seed=seed)


def cohen_kappa(data: npt.ArrayLike) -> float:
    """Cohen's kappa for exactly two raters (two rows), over units both of them rated.

    ``kappa = (p_o - p_e) / (1 - p_e)`` with ``p_e`` from each rater's own marginals.
    """
    matrix = encode_ratings(data, "nominal")
    if matrix.shape[0] != 2:
        raise ValueError("Cohen's kappa needs exactly two raters (rows)")
    first, second = matrix[:, ~np.isnan(matrix).any(axis=0)]
    if first.size == 0:
        return math.nan
    observed = float(np.mean(first == second))
    chance = chance_agreement(first, second)
    if math.isclose(chance, 1.0):
        return math.nan
    return (observed - chance) / (1.0 - chance)


def chance_agreement(first: npt.ArrayLike, second: npt.ArrayLike) -> float:
    """The share of identical ratings two raters would reach by chance, each keeping their
    own mix of values: ``p_e = sum_c p_first(c) p_second(c)`` (Cohen). On a criterion where
    97% of ratings are 1, two raters who ignore the texts agree on 0.97² + 0.03² = 94%."""
    a, b = np.asarray(first, dtype=np.float64), np.asarray(second, dtype=np.float64)
    return sum(float(np.mean(a == c)) * float(np.mean(b == c)) for c in np.union1d(a, b))


def cohen_kappa_with_ci(data: npt.ArrayLike, n_resamples: int = 1000, seed: int = 0) -> Estimate:
    """Cohen's kappa with a percentile bootstrap 95% interval, resampling the units both
    raters rated (resamples where kappa is undefined are left out); N = those units."""
    matrix = encode_ratings(data, "nominal")
    both = matrix[:, ~np.isnan(matrix).any(axis=0)] if matrix.shape[0] == 2 else matrix
    value = cohen_kappa(matrix)
    n = int(both.shape[1])
    if n < 2 or math.isnan(value):
        return Estimate(value, math.nan, math.nan, n)
    rng = np.random.default_rng(seed)
    draws = np.array([cohen_kappa(both[:, rng.integers(0, n, n)]) for _ in range(n_resamples)])
    draws = draws[~np.isnan(draws)]
    if draws.size == 0:
        return Estimate(value, math.nan, math.nan, n)
    low, high = np.percentile(draws, [2.5, 97.5])
    return Estimate(value, float(low), float(high), n)


@dataclass(frozen=True)
class AgreementResult:
    """An agreement figure as methods §8 wants it reported: value, 95% interval, N."""

    value: float
    ci_low: float
    ci_high: float
    n_units: int
    n_raters: int


def alpha_with_ci(
    data: npt.ArrayLike,
    level: Level = "nominal",
    value_order: Sequence[object] | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
) -> AgreementResult:
    """Krippendorff's alpha with its bootstrap interval and N.

    The interval resamples pairable units through their coincidence matrices (see
    :mod:`apps.analysis.stats.coincidence`), so a thousand resamples of tens of thousands of
    annotations take milliseconds. The point value is the `krippendorff` package's.
    """
    matrix = encode_ratings(data, level, value_order)
    pairable = pairable_units(matrix)
    _, low, high = alpha_bootstrap(matrix[:, pairable], level, n_resamples, seed)
    return AgreementResult(
        value=krippendorff_alpha(matrix, level),
        ci_low=low,
        ci_high=high,
        n_units=int(pairable.sum()),
        n_raters=int((~np.isnan(matrix[:, pairable])).any(axis=1).sum()),
    )


def leave_one_out_agreement(
    rows: Sequence[tuple[object, object, object]],
) -> dict[object, tuple[float, int]]:
    """Each rater's agreement with the others: over units someone else also rated, the share
    of this rater's ratings equal to the plurality of the other raters' ratings there (a tie
    among the others counts as agreement when this rating is among the tied). -> {rater:
    (share, units compared)}."""
    by_unit: dict[object, dict[object, object]] = {}
    for unit, rater, value in rows:
        by_unit.setdefault(unit, {})[rater] = value
    hits: dict[object, list[int]] = {}
    for ratings in by_unit.values():
        for rater, value in ratings.items():
            others = [v for r, v in ratings.items() if r != rater]
            if not others:
                continue
            counts = {v: others.count(v) for v in set(others)}
            top = max(counts.values())
            hits.setdefault(rater, []).append(int(counts.get(value, 0) == top))
    return {rater: (sum(h) / len(h), len(h)) for rater, h in hits.items()}


def _paired(x: npt.ArrayLike, y: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray, int]:
    """The pairs of ``x`` and ``y`` where both values exist (not NaN), and how many."""
    xs, ys = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    both = ~(np.isnan(xs) | np.isnan(ys))
    return xs[both], ys[both], int(both.sum())


def pearson_with_ci(x: npt.ArrayLike, y: npt.ArrayLike, confidence: float = 0.95) -> Estimate:
    """Pearson's r over the pairs where both values exist, with its Fisher z interval
    (``tanh(atanh(r) ± z / sqrt(n - 3))``, scipy's default); N = those pairs. Undefined (NaN)
    below three pairs or when either side never varies; no interval below four pairs."""
    xs, ys, n = _paired(x, y)
    if n < 3 or np.ptp(xs) == 0 or np.ptp(ys) == 0:
        return Estimate(math.nan, math.nan, math.nan, n)
    result = stats.pearsonr(xs, ys)
    r = max(-1.0, min(1.0, float(result.statistic)))
    if n < 4:
        return Estimate(r, math.nan, math.nan, n)
    ci = result.confidence_interval(confidence)
    return Estimate(r, float(ci.low), float(ci.high), n)


def _fisher_interval(r: float, se: float, confidence: float) -> tuple[float, float]:
    """``tanh(atanh(r) ± z se)``; a correlation of ±1 has the zero-width interval [r, r]."""
    if abs(r) >= 1:
        return r, r
    z = float(stats.norm.ppf(0.5 + confidence / 2))
    centre = math.atanh(r)
    return math.tanh(centre - z * se), math.tanh(centre + z * se)


def spearman_with_ci(x: npt.ArrayLike, y: npt.ArrayLike, confidence: float = 0.95) -> Estimate:
    """Spearman's rho (scipy's; ties take average ranks) over the pairs where both values
    exist, with the Fisher z interval of Bonett & Wright (2000), whose standard error
    ``sqrt((1 + rho² / 2) / (n - 3))`` suits rho better than Pearson's ``1 / sqrt(n - 3)``;
    N = those pairs. Undefined (NaN) below three pairs or when either side never varies; no
    interval below four pairs."""
    xs, ys, n = _paired(x, y)
    if n < 3 or np.ptp(xs) == 0 or np.ptp(ys) == 0:
        return Estimate(math.nan, math.nan, math.nan, n)
    rho = max(-1.0, min(1.0, float(stats.spearmanr(xs, ys).statistic)))
    if n < 4:
        return Estimate(rho, math.nan, math.nan, n)
    low, high = _fisher_interval(rho, math.sqrt((1 + rho * rho / 2) / (n - 3)), confidence)
    return Estimate(rho, low, high, n)


def kendall_with_ci(x: npt.ArrayLike, y: npt.ArrayLike, confidence: float = 0.95) -> Estimate:
    """Kendall's tau-b (scipy's, corrected for ties) over the pairs where both values exist,
    with the Fisher z interval of Fieller, Hartley & Pearson (1957), standard error
    ``sqrt(0.437 / (n - 4))`` (Bonett & Wright 2000); N = those pairs. Undefined (NaN) below
    three pairs or when either side never varies; no interval below five pairs."""
    xs, ys, n = _paired(x, y)
    if n < 3 or np.ptp(xs) == 0 or np.ptp(ys) == 0:
        return Estimate(math.nan, math.nan, math.nan, n)
    tau = max(-1.0, min(1.0, float(stats.kendalltau(xs, ys).statistic)))
    if n < 5:
        return Estimate(tau, math.nan, math.nan, n)
    low, high = _fisher_interval(tau, math.sqrt(0.437 / (n - 4)), confidence)
    return Estimate(tau, low, high, n)


def pairwise_correlations(matrix: npt.ArrayLike) -> dict[tuple[int, int], Estimate]:
    """Pearson's r with its Fisher interval and N for every pair of columns (i < j) of a
    units x variables matrix, each pair over the units that have both (NaN: missing)."""
    data = np.asarray(matrix, dtype=np.float64)
    columns = range(data.shape[1])
    return {
        (i, j): pearson_with_ci(data[:, i], data[:, j]) for i in columns for j in columns if i < j
    }


@dataclass(frozen=True)
class RatingCounts:
    """What exists in reliability data, whether or not agreement can be computed."""

    ratings: int
    units: int  # units with at least one rating
    raters: int  # raters with at least one rating
    compared: int  # units with two ratings or more: the N of every agreement figure

    @property
    def why_no_agreement(self) -> str:
        """Why no agreement figure can be computed, in a few words ("" when it can).
        Agreement needs at least two raters on a text (:data:`AGREEMENT_NEEDS`)."""
        if self.compared:
            return ""
        if not self.ratings:
            return "no ratings yet"
        return "one rater" if self.raters < 2 else "no text rated twice"


AGREEMENT_NEEDS = "agreement needs at least two raters on a text"


def rating_counts(data: npt.ArrayLike) -> RatingCounts:
    """Ratings, units, raters and units rated twice or more of a raters x units matrix."""
    array = as_reliability_array(data) if np.size(data) else np.zeros((0, 0))
    present = np.vectorize(lambda v: not _is_missing(v), otypes=[bool])(array)
    present = present.reshape(array.shape)
    return RatingCounts(
        ratings=int(present.sum()),
        units=int(present.any(axis=0).sum()),
        raters=int(present.any(axis=1).sum()),
        compared=int((present.sum(axis=0) >= 2).sum()),
    )


def correlation_square(
    pairs: dict[tuple[int, int], Estimate], matrix: npt.ArrayLike
) -> tuple[FloatMatrix, FloatMatrix]:
    """:func:`pairwise_correlations` of ``matrix`` as two symmetric matrices, r and N; the
    diagonal holds 1 (NaN where the variable never varies) and the units that have it."""
    data = np.asarray(matrix, dtype=np.float64)
    present = ~np.isnan(data)
    varies = [np.unique(data[present[:, i], i]).size > 1 for i in range(data.shape[1])]
    corr = np.diag([1.0 if v else math.nan for v in varies])
    counts = np.diag(present.sum(axis=0)).astype(np.float64)
    for (i, j), r in pairs.items():
        corr[i, j] = corr[j, i] = r.value
        counts[i, j] = counts[j, i] = r.n
    return corr, counts
