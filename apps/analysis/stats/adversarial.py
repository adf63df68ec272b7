"""Adversarial search scoring (methods §6, Chen et al. 2024, AdvEval).

Scores are on 0-100. R+ seeks good text the victim judge scores low; R- seeks bad text the
victim scores high. Success thresholds default to the paper's: tau1 = 70 for R+, 30 for R-,
tau2 = 40.
"""

import math
from collections.abc import Sequence
from typing import Final, Literal

from apps.analysis.stats.intervals import Estimate, share_of

Target = Literal["R+", "R-"]

DEFAULT_TAU1: Final[dict[str, float]] = {"R+": 70.0, "R-": 30.0}
DEFAULT_TAU2: Final = 40.0
GOLD_GOOD_THRESHOLD: Final = 50.0


def to_percent_scale(score: float, lo: float, hi: float) -> float:
    """Map a score on [lo, hi] linearly onto 0-100."""
    if not lo < hi:
        raise ValueError("the scale needs lo < hi")
    return (score - lo) / (hi - lo) * 100.0


def feedback_score(s_gold: float, s_victim: float, target: Target, alpha: float = 1.0) -> float:
    """``S_fb = alpha * S_gold - S_victim`` for R+, ``S_victim - alpha * S_gold`` for R-."""
    if target == "R+":
        return alpha * s_gold - s_victim
    if target == "R-":
        return s_victim - alpha * s_gold
    raise ValueError(f"unknown target {target!r}")


def is_success(
    s_gold: float,
    s_victim: float,
    target: Target,
    tau1: float | None = None,
    tau2: float = DEFAULT_TAU2,
) -> bool:
    """R+: ``S_gold > tau1 and S_gold - S_victim > tau2``;
    R-: ``S_gold < tau1 and S_victim - S_gold > tau2`` (strict inequalities, as the paper)."""
    threshold = DEFAULT_TAU1[target] if tau1 is None else tau1
    if target == "R+":
        return s_gold > threshold and s_gold - s_victim > tau2
    if target == "R-":
        return s_gold < threshold and s_victim - s_gold > tau2
    raise ValueError(f"unknown target {target!r}")


def attack_success_rate(
    outcomes: Sequence[tuple[float, float]], target: Target, tau1: float | None = None
) -> float:
    """Share of (S_gold, S_victim) results that are successful attacks."""
    if not outcomes:
        return math.nan
    return sum(is_success(g, v, target, tau1) for g, v in outcomes) / len(outcomes)


def attack_success_estimate(
    outcomes: Sequence[tuple[float, float]], target: Target, tau1: float | None = None
) -> Estimate:
    """:func:`attack_success_rate` with its Wilson interval over the attacks."""
    return share_of([is_success(g, v, target, tau1) for g, v in outcomes])


def gold_validation_accuracy(
    human_labels: Sequence[Sequence[bool]], gold_scores: Sequence[float]
) -> float:
    """Share of texts where the annotators' majority "good" label equals the gold label
    (``S_gold >= 50``). Each text needs an odd number of labels (three in the paper) so a
    majority always exists."""
    if len(human_labels) != len(gold_scores):
        raise ValueError("one set of labels per gold score")
    if not gold_scores:
        return math.nan
    hits = 0
    for labels, gold in zip(human_labels, gold_scores, strict=True):
        if len(labels) % 2 == 0:
            raise ValueError("each text needs an odd number of labels")
        majority_good = 2 * sum(labels) > len(labels)
        hits += majority_good == (gold >= GOLD_GOOD_THRESHOLD)
    return hits / len(gold_scores)
