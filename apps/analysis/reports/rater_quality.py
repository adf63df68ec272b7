"""Rater quality of human ratings (methods §9): a table with every check and its N, and the
warnings a reader must not miss.

The reports that use the ratings (`human-agreement`, `judge-vs-human`) show the warnings once,
at the top, each naming the criterion and the raters, and the full table in their "Rater
quality" section; the ratings import (command and API) answers with the same warnings.
Thresholds are the constants of apps/analysis/stats/raters.py, explained in
docs/analysis.md.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from apps.analysis.reports.base import Section, Table
from apps.analysis.stats.raters import (
    NEAR_DUPLICATE_KAPPA,
    NEAR_DUPLICATE_MIN_CHANCE,
    NEAR_DUPLICATE_MIN_SHARED,
    NEAR_DUPLICATE_SPEARMAN,
    STRAIGHT_LINE_MIN_UNITS,
    NearDuplicatePair,
    alpha_if_removed,
    duplicate_groups,
    most_uniform_raters,
    pair_agreements,
    rater_groups,
    under_rated_units,
)

#: criterion → text (any hashable unit) → rater → score
Ratings = Mapping[str, Mapping[Any, Mapping[str, float]]]

NEAR_DUPLICATE = "near-duplicate raters"
STRAIGHT_LINER = "straight-liner"
ALPHA_IF_REMOVED = "alpha if removed"


@dataclass(frozen=True)
class RaterCheck:
    criterion: str
    check: str
    who: str
    detail: str
    #: What N counts depends on the check: a pair's shared texts, a rater's texts, or texts.
    n: int
    warn: bool = True

    @property
    def message(self) -> str:
        return f"{self.criterion}: {self.check}: {self.who} ({self.detail})"

    def row(self) -> list[object]:
        return [self.criterion, self.check, self.who, self.detail, self.n, _yes(self.warn)]


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def by_rater(texts: Mapping[Hashable, Mapping[str, float]]) -> dict[str, dict[Hashable, float]]:
    out: dict[str, dict[Hashable, float]] = defaultdict(dict)
    for unit, scores in texts.items():
        for rater, value in scores.items():
            out[rater][unit] = value
    return out


def rater_checks(humans: Ratings) -> list[RaterCheck]:
    """Every check on every criterion, one row at least per check (a check that found
    nothing says what it compared); `warn` marks what belongs in the warnings."""
    found: list[RaterCheck] = []
    for criterion, texts in sorted(humans.items()):
        found.extend(_criterion_checks(criterion, texts))
    return found


def _criterion_checks(criterion: str, texts) -> Iterable[RaterCheck]:
    """The checks of one criterion, group by group of raters who rated together (two rating
    sets that share no rater are checked apart, each named by its raters)."""
    groups = rater_groups(by_rater(texts))
    for group in groups:
        members = set(group)
        own = {
            unit: {r: v for r, v in scores.items() if r in members}
            for unit, scores in texts.items()
            if members & scores.keys()
        }
        named = criterion if len(groups) == 1 else f"{criterion} (raters {', '.join(group)})"
        yield from _group_checks(named, own)


def _group_checks(criterion: str, texts) -> Iterable[RaterCheck]:
    raters = by_rater(texts)
    pairs = pair_agreements(raters)
    duplicates = [p for p in pairs if p.is_duplicate()]
    yield from _near_duplicate_checks(criterion, raters, pairs, duplicates)
    yield from _straight_liner_checks(criterion, raters)
    yield from _alpha_checks(criterion, raters, duplicates)
    yield _thin_check(criterion, texts, raters)


def _pair_words(pair: NearDuplicatePair) -> str:
    return (
        f"Cohen's kappa {_fmt(pair.kappa)}, Spearman {_fmt(pair.spearman)}, "
        f"{pair.identical_share:.1%} identical on {pair.shared_units} shared texts"
    )


def _near_duplicate_checks(criterion, raters, pairs, duplicates) -> Iterable[RaterCheck]:
    for pair in duplicates:
        yield RaterCheck(
            criterion,
            NEAR_DUPLICATE,
            f"{pair.rater_a} and {pair.rater_b}",
            f"{_pair_words(pair)}; counted once in alpha if removed",
            pair.shared_units,
        )
    if duplicates:
        return
    bar = (
        f"flagged at kappa ≥ {NEAR_DUPLICATE_KAPPA:g} or Spearman ≥ {NEAR_DUPLICATE_SPEARMAN:g} "
        f"where chance would give ≥ {NEAR_DUPLICATE_MIN_CHANCE:g} disagreements"
    )
    if not pairs:
        why = "only one rater" if len(raters) < 2 else "no two raters share that many texts"
        yield RaterCheck(
            criterion,
            NEAR_DUPLICATE,
            "not checked",
            f"needs two raters with {NEAR_DUPLICATE_MIN_SHARED} shared texts: {why}",
            _most_shared(raters),
            warn=False,
        )
        return
    closest = max(pairs, key=lambda p: _finite(p.kappa))
    yield RaterCheck(
        criterion,
        NEAR_DUPLICATE,
        "no pair",
        f"{len(pairs)} pairs compared; closest {closest.rater_a} and {closest.rater_b}: "
        f"{_pair_words(closest)}, {closest.chance_disagreements:.1f} disagreements expected "
        f"by chance ({bar})",
        closest.shared_units,
        warn=False,
    )


def _straight_liner_checks(criterion, raters) -> Iterable[RaterCheck]:
    candidates = most_uniform_raters(raters)
    flagged = [s for s in candidates if s.is_straight_liner()]
    for liner in flagged:
        others = (
            f"the other raters gave it to {liner.others_share:.1%} of the same texts"
            if math.isfinite(liner.others_share)
            else "no other rater rated these texts"
        )
        yield RaterCheck(
            criterion,
            STRAIGHT_LINER,
            liner.rater,
            f"gave {liner.value:g} to {liner.share:.1%} of {liner.units} texts; {others}",
            liner.units,
        )
    if flagged:
        return
    if not candidates:
        yield RaterCheck(
            criterion,
            STRAIGHT_LINER,
            "not checked",
            f"no rater rated {STRAIGHT_LINE_MIN_UNITS} texts",
            max((len(s) for s in raters.values()), default=0),
            warn=False,
        )
        return
    top = candidates[0]
    others = (
        f", the others {top.others_share:.1%} of the same texts"
        if math.isfinite(top.others_share)
        else ""
    )
    yield RaterCheck(
        criterion,
        STRAIGHT_LINER,
        "no rater",
        f"most uniform: {top.rater} gave {top.value:g} to {top.share:.1%} of {top.units} "
        f"texts{others}",
        top.units,
        warn=False,
    )


def _alpha_checks(criterion, raters, duplicates) -> Iterable[RaterCheck]:
    overall, effects = alpha_if_removed(raters, duplicates=duplicates)
    for effect in effects:
        once = f" ({' and '.join(effect.stands_for)} counted once)" if effect.stands_for[1:] else ""
        yield RaterCheck(
            criterion,
            ALPHA_IF_REMOVED,
            effect.rater + once,
            f"alpha {_fmt(overall)} → {_fmt(effect.alpha_without)} without this rater "
            f"(change {_fmt(effect.change)}, 95% interval {_fmt(effect.ci_low)} to "
            f"{_fmt(effect.ci_high)})",
            len(raters[effect.rater]),
            warn=effect.rises,
        )
    if not effects:
        counted = len(raters) - sum(len(p) - 1 for p in duplicate_groups(duplicates))
        copies = "; near-duplicates counted once" if duplicates else ""
        yield RaterCheck(
            criterion,
            ALPHA_IF_REMOVED,
            "not computed",
            f"needs three raters; {counted} here{copies}",
            len({u for scores in raters.values() for u in scores}),
            warn=False,
        )


def _thin_check(criterion, texts, raters) -> RaterCheck:
    design = max((len(scores) for scores in texts.values()), default=0)
    thin = under_rated_units(raters, expected=design)
    if not thin:
        return RaterCheck(
            criterion,
            f"texts with fewer than {design} raters",
            "no text",
            f"every text has {design} rater{'s' if design != 1 else ''}",
            len(texts),
            warn=False,
        )
    return RaterCheck(
        criterion,
        f"texts with fewer than {design} raters",
        f"{len(thin)} texts",
        f"as few as {min(thin.values())} raters",
        len(thin),
        warn=False,
    )


def _most_shared(raters: Mapping[str, Mapping[Hashable, float]]) -> int:
    """The most texts any two raters share (0 with one rater)."""
    names = sorted(raters)
    return max(
        (len(raters[a].keys() & raters[b].keys()) for a in names for b in names if a < b),
        default=0,
    )


def _finite(value: float) -> float:
    return value if math.isfinite(value) else -math.inf


def _fmt(value: float) -> str:
    return f"{value:.3f}" if math.isfinite(value) else "undefined"


def rater_warnings(humans: Ratings) -> list[str]:
    return warnings_of(rater_checks(humans))


def warnings_of(checks: list[RaterCheck]) -> list[str]:
    """The messages of the checks that warn, each once, for the top of a report."""
    return list(dict.fromkeys(c.message for c in checks if c.warn))


def rater_section(checks: list[RaterCheck]) -> Section:
    return Section(
        "Rater quality",
        "Checks on the human ratings of texts, each corrected for chance: near-duplicate "
        "raters (Cohen's kappa or Spearman near 1 on their shared texts), straight-liners "
        "(one value nearly throughout where the other raters vary), ordinal alpha with each "
        "rater left out (near-duplicates counted once; largest rise first, with a bootstrap "
        "95% interval over texts), texts rated by fewer raters than the best-covered text. "
        "Rows marked warning also head the report.",
        tables=[
            Table(
                "rater_checks",
                ["criterion", "check", "who", "detail", "n", "warning"],
                [check.row() for check in checks],
                "One row per check and criterion; a check that found nothing says what it "
                "compared. N: the shared texts of a pair (near-duplicates), the texts a rater "
                "rated (straight-liner, alpha if removed), the texts concerned (fewer raters).",
            )
        ],
    )
