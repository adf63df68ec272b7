"""The verdict at the top of a report card (docs/cards.md, "The verdict"): for each figure
with a threshold, and for error detection per aspect or ability, one plain word with the
figure, its interval and N behind it.

Power comes before a good verdict: a figure first asks what a perfect judge would reach on
the same texts (``apps.analysis.stats.power``); when even that would not clear the threshold,
a figure whose interval reaches the good side is "too few texts to tell", with how many texts
would do. Power never withholds a bad verdict: an interval wholly on the bad side is a proven
miss, however few the texts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from apps.analysis.definitions.base import Definition
from apps.analysis.formatting import format_value
from apps.analysis.stats import power
from apps.analysis.stats.intervals import Estimate

NOT_MEASURED = "not measured"
NO_RESULT = "no result"
TOO_FEW = "too few texts to tell"
UNSTABLE = "unstable"


@dataclass(frozen=True)
class Power:
    """What a perfect judge would reach with the texts at hand."""

    reaches: float
    enough: bool
    #: Texts with which a perfect judge would clear the threshold; None when unknown or no
    #: number would.
    needed: int | None
    said: str
    #: What ``needed`` counts per: "" (texts in all) or " per kind".
    per: str = ""
    #: What ``needed`` counts: texts, pairs, items, calls.
    noun: str = "texts"


def share_power(definition: Definition, texts: int, threshold: float) -> Power:
    """A share's power: the interval end a perfect judge reaches over ``texts`` units (texts,
    pairs, items or calls: what the share's interval counts)."""
    perfect = definition.perfect if definition.perfect is not None else 0.0
    reaches = power.share_reaches(texts, perfect)
    enough = bool(definition.passes(reaches, reaches, threshold))
    needed = power.share_texts_needed(threshold, perfect)
    side = "at most" if perfect == 0 else "at least"
    noun = counted(definition)
    said = (
        f"N = {texts} {noun}; a perfect judge's 95% interval would reach {side} "
        f"{_n(reaches)}, the threshold is {_n(threshold)}"
    )
    return Power(reaches, enough, needed, said, noun=noun)


def counted(definition: Definition) -> str:
    """What a share's interval counts, from its unit: "share of pairs" → "pairs"."""
    return definition.unit.removeprefix("share of ").strip() or "texts"


def mean_power(texts: int) -> Power:
    """A mean's power: its interval needs texts from two clusters or more."""
    said = f"N = {texts} text{'s' if texts != 1 else ''}; an interval needs two or more"
    return Power(math.nan, texts >= 2, 2, said)


def discernment_power(
    reaches: float, threshold: float, fewest_texts: int, metrics: int, kinds: int
) -> Power:
    """D's power: the D a perfect judge reaches with the kinds' texts (the fewest per kind)."""
    needed = power.pairs_needed(metrics, threshold) if metrics else None
    said = (
        f"{kinds} kinds, as few as {fewest_texts} text{'s' if fewest_texts != 1 else ''} per "
        f"kind on {metrics} metric{'s' if metrics != 1 else ''}; a perfect judge would reach "
        f"D = {_n(reaches)}, the threshold is {_n(threshold)}"
    )
    return Power(reaches, reaches >= threshold, needed, said, " per kind")


def decide(
    definition: Definition, estimate: Estimate, threshold: float, strength: Power | None
) -> tuple[str, str]:
    """The verdict word and why, for a figure that has units."""
    low, high = estimate.ci_low, estimate.ci_high
    interval = not (math.isnan(low) or math.isnan(high))
    if not interval:  # D, or a mean of one value: the value alone
        low = high = estimate.value
    side = definition.passes(low, high, threshold)
    shown = _shown(estimate)
    proven_miss = side is False and interval  # a value alone proves nothing with few texts
    if strength is not None and not strength.enough and not proven_miss:
        more = ""
        if strength.needed:
            more = f"; {strength.needed} {strength.noun}{strength.per} would suffice"
        return TOO_FEW, strength.said + more
    if side is None:
        return UNSTABLE, f"{shown} spans the threshold {_n(threshold)}"
    where = _where(definition, side)
    return (definition.good if side else definition.bad), f"{shown}: {where} {_n(threshold)}"


def _where(definition: Definition, good: bool) -> str:
    """Which side of the threshold, in words."""
    higher = definition.better == "higher"
    if good:
        return "at or above the threshold" if higher else "at or below the threshold"
    return "below the threshold" if higher else "above the threshold"


def _shown(estimate: Estimate) -> str:
    if math.isnan(estimate.ci_low):
        return f"the value {_n(estimate.value)}"
    return f"the 95% interval {_n(estimate.ci_low)} to {_n(estimate.ci_high)}"


def _n(value: float) -> str:
    return format_value(value)
