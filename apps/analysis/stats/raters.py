"""Rater-quality checks on human ratings: pure functions over {rater: {unit: score}}.

A careful researcher looks for raters who are (near-)copies of each other, raters who never
vary (straight-liners), raters whose removal raises alpha the most, and units rated by fewer
raters than the design says (methods §9; thresholds in docs/analysis.md, "Rater quality").

Every check is corrected for chance, because a skewed criterion makes honest raters look
alike. On USR's 0-1 "Understandable", 97% of ratings are 1: two raters who never read the
texts would still give the same rating to 0.97² + 0.03² = 94% of them, and a rater who gives
1 to 97% of texts gives what nearly every text deserves. So:

- **near-duplicates** are judged by Cohen's kappa, the share of identical ratings beyond what
  the two raters' own mixes of values give by chance (``(p_o - p_e) / (1 - p_e)``), not by
  the raw share of identical ratings; or by a Spearman correlation so high that one rater's
  scores are a monotone copy of the other's (a shifted scale). Either needs enough shared
  units, *and* enough variation that chance alone would have produced a few disagreements:
  where chance predicts none, agreeing everywhere proves nothing.
- **straight-liners** give one value to nearly all their units *while the other raters of
  those units do not*.
- **alpha if removed** counts each group of near-duplicate raters once (the first by name
  stands for the group), because a copy inflates alpha: leaving the honest third rater out
  would leave two copies in perfect agreement and make the honest rater look like the
  problem. A rise warns only when its bootstrap 95% interval over units lies above zero.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import TypeVar

import numpy as np
from scipy import stats

from apps.analysis.stats.agreement import Level, chance_agreement, krippendorff_alpha
from apps.analysis.stats.coincidence import alpha_changes_bootstrap

K = TypeVar("K", bound=Hashable)


def rater_groups(ratings: Mapping[str, Mapping[K, float]]) -> list[list[str]]:
    """The groups of raters who rated together: raters are joined when they share a text,
    and through each other (the connected parts of the raters-texts graph); each group
    sorted, the groups by their first rater. Two rating sets that share no rater are two
    groups: checks that compare raters (alpha if removed) mean nothing across them."""
    parent = {rater: rater for rater in ratings}

    def root(rater: str) -> str:
        while parent[rater] != rater:
            parent[rater] = parent[parent[rater]]
            rater = parent[rater]
        return rater

    first_of: dict[K, str] = {}
    for rater in sorted(ratings):
        for unit in ratings[rater]:
            if unit in first_of:
                parent[root(rater)] = root(first_of[unit])
            else:
                first_of[unit] = rater
    groups: dict[str, list[str]] = {}
    for rater in sorted(ratings):
        groups.setdefault(root(rater), []).append(rater)
    return sorted(groups.values())


def under_rated_units(ratings: Mapping[str, Mapping[K, float]], *, expected: int) -> dict[K, int]:
    """Units with fewer than `expected` raters, and how many they have."""
    counts: Counter[K] = Counter(u for scores in ratings.values() for u in scores)
    return {unit: n for unit, n in counts.items() if n < expected}


#: Two raters are near-duplicates when, on at least NEAR_DUPLICATE_MIN_SHARED units both
#: rated, where chance alone would give at least NEAR_DUPLICATE_MIN_CHANCE disagreements,
#: their Cohen's kappa is NEAR_DUPLICATE_KAPPA or more, or their Spearman correlation is
#: NEAR_DUPLICATE_SPEARMAN or more (docs/analysis.md).
NEAR_DUPLICATE_KAPPA = 0.9
NEAR_DUPLICATE_SPEARMAN = 0.98
NEAR_DUPLICATE_MIN_SHARED = 10
NEAR_DUPLICATE_MIN_CHANCE = 5.0
#: A straight-liner gives one and the same score to this share of their units or more...
STRAIGHT_LINE_SHARE = 0.95
STRAIGHT_LINE_MIN_UNITS = 10
#: ...while the other raters of the same units give that score to less than this share.
STRAIGHT_LINE_OTHERS_BELOW = 0.75
#: Leaving this rater out raises alpha by this much or more (the rise's 95% interval above
#: zero): worth a look.
ALPHA_IF_REMOVED_RISE = 0.05
ALPHA_IF_REMOVED_RESAMPLES = 1000


@dataclass(frozen=True)
class NearDuplicatePair:
    """How alike two raters are on the units both rated."""

    rater_a: str
    rater_b: str
    shared_units: int
    identical_share: float
    spearman: float
    #: Cohen's kappa: identical ratings beyond chance (NaN when chance agreement is 1).
    kappa: float = math.nan
    #: Disagreements chance alone would give on the shared units: shared x (1 - p_e).
    chance_disagreements: float = math.nan

    def is_duplicate(
        self,
        *,
        kappa: float = NEAR_DUPLICATE_KAPPA,
        spearman: float = NEAR_DUPLICATE_SPEARMAN,
        min_chance: float = NEAR_DUPLICATE_MIN_CHANCE,
    ) -> bool:
        if not self.chance_disagreements >= min_chance:
            return False
        return _at_least(self.kappa, kappa) or _at_least(self.spearman, spearman)


def _at_least(value: float, bar: float) -> bool:
    return math.isfinite(value) and value >= bar


def pair_agreements(
    ratings: Mapping[str, Mapping[K, float]], *, min_shared: int = NEAR_DUPLICATE_MIN_SHARED
) -> list[NearDuplicatePair]:
    """Every pair of raters sharing at least `min_shared` units, with its identical share,
    Cohen's kappa, Spearman's rho and the disagreements chance would give."""
    found = []
    for a, b in combinations(sorted(ratings), 2):
        shared = sorted(ratings[a].keys() & ratings[b].keys(), key=str)
        if len(shared) < min_shared:
            continue
        xs = np.array([ratings[a][u] for u in shared], dtype=float)
        ys = np.array([ratings[b][u] for u in shared], dtype=float)
        identical, chance = float(np.mean(xs == ys)), chance_agreement(xs, ys)
        kappa = math.nan if math.isclose(chance, 1.0) else (identical - chance) / (1 - chance)
        found.append(
            NearDuplicatePair(
                a, b, len(shared), identical, _spearman(xs, ys), kappa, len(shared) * (1 - chance)
            )
        )
    return found


def near_duplicate_raters(
    ratings: Mapping[str, Mapping[K, float]],
    *,
    kappa: float = NEAR_DUPLICATE_KAPPA,
    spearman: float = NEAR_DUPLICATE_SPEARMAN,
    min_shared: int = NEAR_DUPLICATE_MIN_SHARED,
    min_chance: float = NEAR_DUPLICATE_MIN_CHANCE,
) -> list[NearDuplicatePair]:
    """Pairs of raters whose scores on their shared units are (almost) copies of each other
    beyond chance: Cohen's kappa at least `kappa`, or Spearman's rho at least `spearman`, on
    at least `min_shared` shared units where chance would give `min_chance` disagreements."""
    return [
        pair
        for pair in pair_agreements(ratings, min_shared=min_shared)
        if pair.is_duplicate(kappa=kappa, spearman=spearman, min_chance=min_chance)
    ]


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
    #: The share of the other raters' ratings of the same units that are `value` (NaN: no
    #: other rater rated them).
    others_share: float = math.nan

    def is_straight_liner(
        self,
        *,
        share: float = STRAIGHT_LINE_SHARE,
        others_below: float = STRAIGHT_LINE_OTHERS_BELOW,
    ) -> bool:
        return self.share >= share and not self.others_share >= others_below


def most_uniform_raters(
    ratings: Mapping[str, Mapping[K, float]], *, min_units: int = STRAIGHT_LINE_MIN_UNITS
) -> list[StraightLiner]:
    """Each rater with at least `min_units` units: their most frequent score, its share, and
    the share of the other raters' ratings of the same units that gave it (most uniform
    first)."""
    found = []
    for rater in sorted(ratings):
        scores = ratings[rater]
        if len(scores) < min_units:
            continue
        value, count = Counter(scores.values()).most_common(1)[0]
        others = [
            other[u] == value
            for name, other in ratings.items()
            if name != rater
            for u in scores
            if u in other
        ]
        others_share = float(np.mean(others)) if others else math.nan
        found.append(StraightLiner(rater, value, count / len(scores), len(scores), others_share))
    return sorted(found, key=lambda s: -s.share)


def straight_liners(
    ratings: Mapping[str, Mapping[K, float]],
    *,
    share: float = STRAIGHT_LINE_SHARE,
    min_units: int = STRAIGHT_LINE_MIN_UNITS,
    others_below: float = STRAIGHT_LINE_OTHERS_BELOW,
) -> list[StraightLiner]:
    """Raters who gave their most frequent score to at least `share` of their units while
    the other raters of those units gave it to less than `others_below` of their ratings
    (with no other rater to compare, the share alone decides). By name."""
    found = most_uniform_raters(ratings, min_units=min_units)
    flagged = [s for s in found if s.is_straight_liner(share=share, others_below=others_below)]
    return sorted(flagged, key=lambda s: s.rater)


def duplicate_groups(pairs: Iterable[NearDuplicatePair]) -> list[tuple[str, ...]]:
    """Raters linked by near-duplicate pairs, as groups (a~b and b~c: one group a, b, c),
    each sorted by name; the first stands for the group."""
    parent: dict[str, str] = {}

    def root(name: str) -> str:
        while parent.setdefault(name, name) != name:
            name = parent[name]
        return name

    for pair in pairs:
        first, second = sorted((root(pair.rater_a), root(pair.rater_b)))
        parent[second] = first
    groups: dict[str, list[str]] = {}
    for name in parent:
        groups.setdefault(root(name), []).append(name)
    return sorted(tuple(sorted(members)) for members in groups.values())


@dataclass(frozen=True)
class RaterEffect:
    rater: str
    alpha_without: float
    change: float  # alpha without the rater minus alpha with everyone
    #: The change's percentile bootstrap 95% interval over units.
    ci_low: float = math.nan
    ci_high: float = math.nan
    #: The raters this one stands for (itself and its near-duplicates, counted once).
    stands_for: tuple[str, ...] = field(default=())

    @property
    def rises(self) -> bool:
        """Leaving the rater out raises alpha by ALPHA_IF_REMOVED_RISE or more, and the
        rise's interval lies above zero: a rise, not the luck of these units."""
        return _at_least(self.change, ALPHA_IF_REMOVED_RISE) and self.ci_low > 0


def alpha_if_removed(
    ratings: Mapping[str, Mapping[K, float]],
    *,
    level: Level = "ordinal",
    duplicates: Sequence[NearDuplicatePair] = (),
    n_resamples: int = ALPHA_IF_REMOVED_RESAMPLES,
    seed: int = 0,
) -> tuple[float, list[RaterEffect]]:
    """Alpha with every rater, and alpha with each rater left out (largest rise first), each
    change with a bootstrap 95% interval over units. Each group of `duplicates` counts once
    (its first rater by name stands for it, the others are left out of both alphas).
    Needs three raters or more after that: with two, leaving one out leaves nothing."""
    groups = {g[0]: g for g in duplicate_groups(duplicates)}
    dropped = {name for g in groups.values() for name in g[1:]}
    raters = [r for r in sorted(ratings) if r not in dropped]
    units = sorted({u for r in raters for u in ratings[r]}, key=str)
    matrix = np.array(
        [[ratings[r].get(u, math.nan) for u in units] for r in raters], dtype=float
    ).reshape(len(raters), len(units))
    overall = krippendorff_alpha(matrix, level) if len(raters) >= 2 else math.nan
    if len(raters) < 3:
        return overall, []
    effects = []
    changes = alpha_changes_bootstrap(matrix, level, n_resamples, seed)
    for i, rater in enumerate(raters):
        _, low, high = changes[i]
        without = krippendorff_alpha(np.delete(matrix, i, axis=0), level)
        effects.append(
            RaterEffect(rater, without, without - overall, low, high, groups.get(rater, (rater,)))
        )
    effects.sort(key=lambda e: -e.change if math.isfinite(e.change) else math.inf)
    return overall, effects
