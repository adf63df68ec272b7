"""Discernment of hierarchical perturbation (methods §4, Wang, Yuan et al. 2024, DHP).

For kind i and metric j, ``p_ij`` is a one-sided Wilcoxon signed-rank p-value (original
scores greater than perturbed). The p-values of a kind are combined into one p, turned into
a discernment ``D = ln(p) / ln(0.05)`` (D = 1 exactly at p = 0.05, higher is better).

Two combinations are offered (see docs/analysis.md):

- **Default: Wilson's harmonic mean p-value (HMP), made calibrated.** The weighted HMP is
  ``sum_j w_j / sum_j (w_j / p_j)`` (equal weights 1/M for D, expert weights for D^EW). Its
  asymptotically exact p-value (Wilson 2019, as the R package ``harmonicmeanp`` computes it)
  is the upper tail of a Landau distribution with location ``ln M + 1 - gamma - ln(2/pi)``
  (about ln M + 0.874) and scale pi/2, taken at ``1 / HMP``: :func:`hmp_pvalue`. Under the
  null its false-positive rate at 0.05 is close to 5% for any M (see the tests).
- **As published**: the paper's ``p_i = 1 / sum_j (1 / p_ij)`` and
  ``p_i^EW = 1 / sum_j (EW_ij / p_ij)`` (:func:`combined_p`, :func:`combined_p_weighted`),
  kept to reproduce its tables. The unweighted form is M times the HMP, never above 1/M: with
  four null metrics "D >= 1" happens about 30% of the time, and a judge that never changes
  its score gets D = ln 0.25 / ln 0.05 = 0.46 instead of 0.
"""

import math
from collections.abc import Hashable, Mapping, Sequence
from typing import Final, Literal, TypeVar

import numpy as np
import numpy.typing as npt
from scipy import stats

Level = Literal["C", "W", "S"]
SIGNIFICANCE: Final = 0.05
#: Location of the Landau law of 1/HMP beyond ln M: 1 + digamma(1) - ln(2/pi) ~ 0.874.
LANDAU_OFFSET: Final = 1.0 - float(np.euler_gamma) - math.log(2.0 / math.pi)
LANDAU_SCALE: Final = math.pi / 2.0

K = TypeVar("K", bound=Hashable)


def wilcoxon_p(orig_scores: npt.ArrayLike, pert_scores: npt.ArrayLike) -> float:
    """One-sided Wilcoxon signed-rank p-value that original scores exceed perturbed ones.

    Pairs with a missing score (NaN) are dropped. All-zero differences (the judge never
    changed its score) give p = 1; no complete pair at all gives NaN.
    """
    orig = np.asarray(orig_scores, dtype=np.float64)
    pert = np.asarray(pert_scores, dtype=np.float64)
    if orig.shape != pert.shape:
        raise ValueError("original and perturbed scores must be paired (same shape)")
    complete = ~(np.isnan(orig) | np.isnan(pert))
    orig, pert = orig[complete], pert[complete]
    if orig.size == 0:
        return math.nan
    if np.all(orig == pert):
        return 1.0
    return float(stats.wilcoxon(orig, pert, alternative="greater").pvalue)


def _check_p(p_values: Sequence[float]) -> None:
    if any(not 0.0 <= p <= 1.0 for p in p_values if not math.isnan(p)):
        raise ValueError("p-values must lie in [0, 1]")


def combined_p(p_values: Sequence[float]) -> float:
    """As published: ``1 / sum_j (1 / p_j)``, the paper's unweighted combination (weight 1
    per metric, so not a mean and not a calibrated p; see module). A zero p gives 0; a NaN p
    gives NaN."""
    return combined_p_weighted(p_values, [1.0] * len(p_values), normalized=False)


def combined_p_weighted(
    p_values: Sequence[float], weights: Sequence[float], normalized: bool = True
) -> float:
    """As published: ``1 / sum_j (w_j / p_j)`` with expert weights of one kind, which must
    sum to 1 (this is Wilson's weighted HMP itself, without its calibration).

    A metric with weight 0 is left out entirely (its p-value, even 0 or NaN, plays no part).
    A zero p with positive weight gives 0. ``normalized=False`` skips the sum-to-1 check
    (used by :func:`combined_p`).
    """
    if len(p_values) != len(weights):
        raise ValueError("one weight per p-value")
    if any(w < 0 for w in weights):
        raise ValueError("weights must be non-negative")
    if normalized and not math.isclose(sum(weights), 1.0, abs_tol=1e-9):
        raise ValueError("expert weights of a kind must sum to 1")
    used = [(p, w) for p, w in zip(p_values, weights, strict=True) if w > 0]
    if not used:
        raise ValueError("at least one metric needs a positive weight")
    _check_p([p for p, _ in used])
    if any(math.isnan(p) for p, _ in used):
        return math.nan
    if any(p == 0.0 for p, _ in used):
        return 0.0
    return 1.0 / sum(w / p for p, w in used)


def _hmp_terms(
    p_values: Sequence[float], weights: Sequence[float] | None
) -> tuple[list[tuple[float, float]], float] | float:
    """The (p, w) pairs that enter an HMP, weights normalized to 1, or the answer itself
    (0 or NaN) when one p decides it."""
    if weights is None:
        weights = [1.0] * len(p_values)
    if len(p_values) != len(weights):
        raise ValueError("one weight per p-value")
    if any(w < 0 for w in weights):
        raise ValueError("weights must be non-negative")
    used = [(p, w) for p, w in zip(p_values, weights, strict=True) if w > 0]
    if not used:
        raise ValueError("at least one p-value needs a positive weight")
    _check_p([p for p, _ in used])
    if any(math.isnan(p) for p, _ in used):
        return math.nan
    if any(p == 0.0 for p, _ in used):
        return 0.0
    total = math.fsum(w for _, w in used)
    return [(p, w / total) for p, w in used], total


def harmonic_mean_p(p_values: Sequence[float], weights: Sequence[float] | None = None) -> float:
    """Wilson's weighted harmonic mean p-value ``sum_j w_j / sum_j (w_j / p_j)``.

    Equal weights when ``weights`` is None; weights are normalized to sum to 1 and a metric
    with weight 0 is left out. A zero p (positive weight) gives 0, a NaN p gives NaN.
    """
    terms = _hmp_terms(p_values, weights)
    if isinstance(terms, float):
        return terms
    used, _ = terms
    return 1.0 / math.fsum(w / p for p, w in used)


def hmp_pvalue(p_values: Sequence[float], weights: Sequence[float] | None = None) -> float:
    """The default combined p: the asymptotically exact p-value of the weighted HMP.

    ``P(Landau(ln L + 0.874, pi/2) > 1/HMP)`` with L the number of p-values combined (those
    with a positive weight), as ``p.hmp`` of the R package harmonicmeanp computes it. The
    Landau law is exact in the tail, where decisions are made; near 1 it can fall below the
    HMP itself (for M = 2 p-values that are all 1 it would give 0.73: evidence from tests that
    saw none), so the larger of the two is returned: no sign of a drop gives p = 1, D = 0.
    A single p-value needs no combination and is returned as it is.
    """
    terms = _hmp_terms(p_values, weights)
    if isinstance(terms, float):
        return terms
    used, _ = terms
    if len(used) == 1:
        return used[0][0]
    hmp = harmonic_mean_p(p_values, weights)
    location = math.log(len(used)) + LANDAU_OFFSET
    tail = float(stats.landau.sf(1.0 / hmp, loc=location, scale=LANDAU_SCALE))
    return min(1.0, max(tail, hmp))


def discernment(p: float) -> float:
    """``D = log_0.05(p) = ln(p) / ln(0.05)``: 1 at p = 0.05, 0 at p = 1, +inf at p = 0."""
    _check_p([p])
    if math.isnan(p):
        return math.nan
    if p == 0.0:
        return math.inf
    return math.log(p) / math.log(SIGNIFICANCE) + 0.0  # + 0.0 turns -0.0 (p = 1) into 0.0


def d_min(discernments: Mapping[K, float]) -> float:
    """Worst case over kinds: the minimum D (NaN if any kind's D is NaN)."""
    if not discernments:
        return math.nan
    values = list(discernments.values())
    return math.nan if any(math.isnan(d) for d in values) else min(values)


def level_weights(levels: Mapping[K, Level]) -> dict[K, float]:
    """Weight per kind such that every level present has the same total weight, shared
    equally by the kinds of that level (DHP §4.3.3). Weights sum to 1."""
    per_level = {level: sum(1 for v in levels.values() if v == level) for level in levels.values()}
    n_levels = len(per_level)
    return {kind: 1.0 / (n_levels * per_level[level]) for kind, level in levels.items()}


def d_avg(discernments: Mapping[K, float], levels: Mapping[K, Level]) -> float:
    """Level-balanced mean of D over kinds (see :func:`level_weights`)."""
    if set(discernments) != set(levels):
        raise ValueError("every kind needs a level and a discernment")
    if not discernments:
        return math.nan
    weights = level_weights(levels)
    return math.fsum(weights[kind] * d for kind, d in discernments.items())


def expert_weights(votes: Mapping[K, int]) -> dict[K, float] | None:
    """Expert weights of one kind: each metric's share of the votes (4, 1, 5 -> .4, .1, .5).

    With no votes at all there is no expert opinion, and ``None`` is returned rather than
    inventing one (uniform weights would silently turn D^EW into Wilson's plain HMP);
    D^EW for that kind is then undefined and should be shown as missing.
    """
    if any(v < 0 for v in votes.values()):
        raise ValueError("votes must be non-negative")
    total = sum(votes.values())
    if total == 0:
        return None
    return {metric: count / total for metric, count in votes.items()}
