"""Rater-quality checks on human ratings: pure functions over {rater: {unit: score}}.

A careful researcher looks for raters who are (near-)copies of each other, raters who never
vary (straight-liners), raters whose removal raises alpha the most, and units rated by fewer
raters than the design says (methods §9; thresholds in docs/analysis.md).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from itertools import combinations
from typing import TypeVar

import numpy as np
from scipy import stats

from apps.analysis.stats.agreement import Level, krippendorff_alpha

K = TypeVar("K", bound=Hashable)


def under_rated_units(ratings: Mapping[str, Mapping[K, float]], *, expected: int) -> dict[K, int]:
    """Units with fewer than `expected` raters, and how many they have."""
    counts: Counter[K] = Counter(u for scores in ratings.values() for u in scores)
    return {unit: n for unit, n in counts.items() if n < expected}


#: Two raters are near-duplicates when, on at least NEAR_DUPLICATE_MIN_SHARED units both rated,
#: they gave the same score on NEAR_DUPLICATE_IDENTICAL_SHARE of them or more, or their scores
#: have a Spearman correlation of NEAR_DUPLICATE_SPEARMAN or more (docs/analysis.md).
NEAR_DUPLICATE_IDENTICAL_SHARE = 0.95
NEAR_DUPLICATE_SPEARMAN = 0.98
NEAR_DUPLICATE_MIN_SHARED = 10
#: A straight-liner gives one and the same score to this share of their units or more.
STRAIGHT_LINE_SHARE = 0.95
STRAIGHT_LINE_MIN_UNITS = 10
#: Leaving this rater out raises alpha by this much or more: worth a look.
ALPHA_IF_REMOVED_RISE = 0.05


@dataclass(frozen=True)
class NearDuplicatePair:
    rater_a: str
    rater_b: str
    shared_units: int
    identical_share: float
    spearman: float


def near_duplicate_raters(
    ratings: Mapping[str, Mapping[K, float]],
    *,
    identical_share: float = NEAR_DUPLICATE_IDENTICAL_SHARE,
    spearman: float = NEAR_DUPLICATE_SPEARMAN,
    min_shared: int = NEAR_DUPLICATE_MIN_SHARED,
) -> list[NearDuplicatePair]:
    """Pairs of raters whose scores on their shared units are (almost) copies of each other:
    identical on at least `identical_share` of them, or Spearman's rho at least `spearman`."""
    found = []
    for a, b in combinations(sorted(ratings), 2):
        shared = sorted(ratings[a].keys() & ratings[b].keys(), key=str)
        if len(shared) < min_shared:
            continue
        xs = np.array([ratings[a][u] for u in shared], dtype=float)
        ys = np.array([ratings[b][u] for u in shared], dtype=float)
        share = float(np.mean(xs == ys))
        rho = _spearman(xs, ys)
        if share >= identical_share or (math.isfinite(rho) and rho >= spearman):
            found.append(NearDuplicatePair(a, b, len(shared), share, rho))
    return found


def _spearman(xs: np.ndarray, ys: np.ndarray) -> float:
    """Spearman's rho; NaN when either side never varies (a correlation is undefined)."""
    if np.unique(xs).size < 2 or np.unique(ys).size < 2:
        return math.nan
    return float(stats.spearmanr(xs, ys).statistic)


@dataclass(frozen=True)
class StraightLiner:
    rater: str
    value: float
    share: float
    units: int


def straight_liners(
    ratings: Mapping[str, Mapping[K, float]],
    *,
    share: float = STRAIGHT_LINE_SHARE,
    min_units: int = STRAIGHT_LINE_MIN_UNITS,
) -> list[StraightLiner]:
    """Raters who gave their most frequent score to at least `share` of their units."""
    found = []
    for rater in sorted(ratings):
        scores = list(ratings[rater].values())
        if len(scores) < min_units:
            continue
        value, count = Counter(scores).most_common(1)[0]
        if count / len(scores) >= share:
            found.append(StraightLiner(rater, value, count / len(scores), len(scores)))
    return found


@dataclass(frozen=True)
class RaterEffect:
    rater: str
    alpha_without: float
    change: float  # alpha without the rater minus alpha with everyone


def alpha_if_removed(
    ratings: Mapping[str, Mapping[K, float]], *, level: Level = "ordinal"
) -> tuple[float, list[RaterEffect]]:
    """Alpha with every rater, and alpha with each rater left out (largest rise first).
    Needs three raters or more: with two, leaving one out leaves nothing to compare."""
    raters = sorted(ratings)
    units = sorted({u for scores in ratings.values() for u in scores}, key=str)
    matrix = np.array(
        [[ratings[r].get(u, math.nan) for u in units] for r in raters], dtype=float
    ).reshape(len(raters), len(units))
    overall = krippendorff_alpha(matrix, level) if len(raters) >= 2 else math.nan
    if len(raters) < 3:
        return overall, []
    effects = []
    for i, rater in enumerate(raters):
        without = krippendorff_alpha(np.delete(matrix, i, axis=0), level)
        effects.append(RaterEffect(rater, without, without - overall))
    effects.sort(key=lambda e: -e.change if math.isfinite(e.change) else math.inf)
    return overall, effects
