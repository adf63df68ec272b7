"""Rater-quality checks on imported ratings: pure functions over {rater: {unit: score}}.

A careful researcher looks for raters who are copies of each other, raters who never vary,
and units rated by fewer raters than the design says.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from itertools import combinations
from typing import TypeVar

K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True)
class IdenticalPair:
    rater_a: str
    rater_b: str
    shared_units: int


def identical_raters(
    ratings: Mapping[str, Mapping[K, float]], *, min_shared: int = 2
) -> list[IdenticalPair]:
    """Pairs of raters who gave the same score on every unit both rated (at least min_shared)."""
    found = []
    for a, b in combinations(sorted(ratings), 2):
        shared = ratings[a].keys() & ratings[b].keys()
        if len(shared) >= min_shared and all(ratings[a][u] == ratings[b][u] for u in shared):
            found.append(IdenticalPair(a, b, len(shared)))
    return found


def constant_raters(ratings: Mapping[str, Mapping[K, float]], *, min_units: int = 2) -> list[str]:
    """Raters who gave one and the same score to every unit they rated (at least min_units)."""
    return sorted(
        rater
        for rater, scores in ratings.items()
        if len(scores) >= min_units and len(set(scores.values())) == 1
    )


def under_rated_units(ratings: Mapping[str, Mapping[K, float]], *, expected: int) -> dict[K, int]:
    """Units with fewer than `expected` raters, and how many they have."""
    counts: Counter[K] = Counter(u for scores in ratings.values() for u in scores)
    return {unit: n for unit, n in counts.items() if n < expected}
