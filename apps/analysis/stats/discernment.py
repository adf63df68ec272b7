"""Discernment of hierarchical perturbation (methods §4, Wang, Yuan et al. 2024, DHP).

For kind i and metric j, ``p_ij`` is a one-sided Wilcoxon signed-rank p-value (original
scores greater than perturbed). The p-values of a kind are combined as the paper writes it,

    p_i    = 1 / sum_j (1 / p_ij)
    p_i^EW = 1 / sum_j (EW_ij / p_ij),   sum_j EW_ij = 1

and turned into a discernment ``D = ln(p) / ln(0.05)``, so D = 1 exactly at p = 0.05 and
higher is better.

Note: Wilson's (2019) harmonic mean p-value is ``sum_j w_j / sum_j (w_j / p_j)`` with weights
summing to 1. ``p_i^EW`` is exactly that; ``p_i`` is the same formula with weight 1 per
metric, i.e. M times smaller than the harmonic *mean* of M p-values — it is not a mean and
can be below the smallest p_ij. So D and D^EW are on different footings: with uniform expert
weights, ``p^EW = M * p``. It also means "D >= 1 is significant at 0.05" holds for D^EW (up to
the HMP's small anti-conservatism) but not for the unweighted D: with four independent null
metrics, D >= 1 happens about 30% of the time (see the tests). We follow the paper (and
docs/methods.md §4) in the formula and flag the caveat in reports.
"""

import math
from collections.abc import Hashable, Mapping, Sequence
from typing import Final, Literal, TypeVar

import numpy as np
import numpy.typing as npt
from scipy import stats

Level = Literal["C", "W", "S"]
SIGNIFICANCE: Final = 0.05

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
    """``1 / sum_j (1 / p_j)``: the paper's unweighted combination (weight 1 per metric, so
    not a mean; see module). A zero p gives 0; a NaN p gives NaN."""
    return combined_p_weighted(p_values, [1.0] * len(p_values), normalized=False)


def combined_p_weighted(
    p_values: Sequence[float], weights: Sequence[float], normalized: bool = True
) -> float:
    """``1 / sum_j (w_j / p_j)`` with expert weights of one kind, which must sum to 1.

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
