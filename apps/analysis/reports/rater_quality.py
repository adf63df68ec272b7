"""Rater quality of human ratings (methods §9), as warnings that cannot be missed and a table.

The same warnings head the reports that use the ratings and come back from the ratings
import (command and API). Thresholds are the constants of apps/analysis/stats/raters.py,
explained in docs/analysis.md.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from apps.analysis.reports.base import Section, Table
from apps.analysis.stats.raters import (
    ALPHA_IF_REMOVED_RISE,
    alpha_if_removed,
    near_duplicate_raters,
    straight_liners,
    under_rated_units,
)

#: criterion → text (any hashable unit) → rater → score
Ratings = Mapping[str, Mapping[Any, Mapping[str, float]]]


@dataclass(frozen=True)
class RaterCheck:
    criterion: str
    check: str
    who: str
    detail: str
    n: int
    warn: bool = True

    @property
    def message(self) -> str:
        return f"{self.criterion}: {self.check}: {self.who} ({self.detail})"


def by_rater(texts: Mapping[Hashable, Mapping[str, float]]) -> dict[str, dict[Hashable, float]]:
    out: dict[str, dict[Hashable, float]] = defaultdict(dict)
    for unit, scores in texts.items():
        for rater, value in scores.items():
            out[rater][unit] = value
    return out


def rater_checks(humans: Ratings) -> list[RaterCheck]:
    """Every check on every criterion; `warn` marks what belongs in the warnings."""
    found: list[RaterCheck] = []
    for criterion, texts in sorted(humans.items()):
        found.extend(_criterion_checks(criterion, texts))
    return found


def _criterion_checks(criterion: str, texts) -> Iterable[RaterCheck]:
    raters = by_rater(texts)
    for pair in near_duplicate_raters(raters):
        yield RaterCheck(
            criterion,
            "near-duplicate raters",
            f"{pair.rater_a} and {pair.rater_b}",
            f"{pair.identical_share:.1%} identical, Spearman {_fmt(pair.spearman)} "
            f"on {pair.shared_units} shared texts",
            pair.shared_units,
        )
    for liner in straight_liners(raters):
        yield RaterCheck(
            criterion,
            "straight-liner",
            liner.rater,
            f"gave {liner.value:g} to {liner.share:.1%} of {liner.units} texts",
            liner.units,
        )
    overall, effects = alpha_if_removed(raters)
    for effect in effects:
        rises = math.isfinite(effect.change) and effect.change >= ALPHA_IF_REMOVED_RISE
        yield RaterCheck(
            criterion,
            "alpha if removed",
            effect.rater,
            f"alpha {_fmt(overall)} → {_fmt(effect.alpha_without)} without this rater",
            len(raters[effect.rater]),
            warn=rises,
        )
    design = max((len(scores) for scores in texts.values()), default=0)
    thin = under_rated_units(raters, expected=design)
    if thin:
        yield RaterCheck(
            criterion,
            f"texts with fewer than {design} raters",
            f"{len(thin)} texts",
            f"as few as {min(thin.values())} raters",
            len(thin),
            warn=False,
        )


def _fmt(value: float) -> str:
    return f"{value:.3f}" if math.isfinite(value) else "undefined"


def rater_warnings(humans: Ratings) -> list[str]:
    return [c.message for c in rater_checks(humans) if c.warn]


def rater_section(humans: Ratings) -> Section:
    rows = [[c.criterion, c.check, c.who, c.detail, c.n, c.warn] for c in rater_checks(humans)]
    return Section(
        "Rater quality",
        "Checks on the human ratings: near-duplicate raters (a copy, or almost), straight-"
        "liners (one value nearly throughout), ordinal alpha with each rater left out "
        "(largest rise first), texts rated by fewer raters than the best-covered text. "
        "Rows marked warning also head the report.",
        tables=[
            Table(
                "rater_checks",
                ["criterion", "check", "who", "detail", "n", "warning"],
                [[*row[:5], "yes" if row[5] else ""] for row in rows],
            )
        ],
    )
