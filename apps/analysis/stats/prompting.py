"""Prompting strategies and the misleading cue (methods §5, Chaudhary et al. 2024).

The misleading-cue prompt claims a human expert gave the rating PR, chosen to contradict the
experts: ``m`` = the mode of r1..r3, or their maximum when all three differ;
``PR = hi if m <= hi / 2 else lo``. The threshold is ``hi / 2`` as in the paper, not the scale
midpoint ``(lo + hi) / 2``: on 1-5 it is 2.5 (midpoint 3), on 1-3 it is 1.5, so a middling 2
is "high" there and gets PR = 1.
"""

from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from apps.analysis.stats.agreement import (
    AgreementResult,
    Level,
    alpha_with_ci,
    krippendorff_alpha,
)
from apps.analysis.stats.intervals import Estimate, share_of


def cue_anchor(r1: float, r2: float, r3: float) -> float:
    """``m`` of the PR rule: the mode of three ratings, or the maximum when all differ."""
    value, count = Counter((r1, r2, r3)).most_common(1)[0]
    return value if count > 1 else max(r1, r2, r3)


def misleading_rating(r1: float, r2: float, r3: float, lo: float, hi: float) -> float:
    """The perturbed rating PR shown in the misleading-cue prompt (see module)."""
    if not lo < hi:
        raise ValueError("the scale needs lo < hi")
    if any(not lo <= r <= hi for r in (r1, r2, r3)):
        raise ValueError("expert ratings must lie on the scale [lo, hi]")
    return hi if cue_anchor(r1, r2, r3) <= hi / 2 else lo


def match_share_estimate(
    misleading_scores: npt.ArrayLike, knowledge_scores: npt.ArrayLike
) -> Estimate:
    """Share of items whose misleading-cue score equals the knowledge-prompt score (pairs
    with a missing score dropped), with its Wilson interval over the complete pairs. High
    means the judge resisted the cue."""
    cue = np.asarray(misleading_scores, dtype=np.float64)
    plain = np.asarray(knowledge_scores, dtype=np.float64)
    if cue.shape != plain.shape:
        raise ValueError("scores must be paired (same shape)")
    complete = ~(np.isnan(cue) | np.isnan(plain))
    return share_of(cue[complete] == plain[complete])


def judge_consistency(
    scores_by_strategy: Mapping[str, Sequence[float]],
    level: Level = "ordinal",
    n_resamples: int = 1000,
) -> AgreementResult:
    """Krippendorff's alpha with each prompting strategy as a rater (rows) over items, with
    its bootstrap interval and N."""
    return alpha_with_ci(list(scores_by_strategy.values()), level, n_resamples=n_resamples)


def judge_human_alpha(
    judge_scores: Sequence[float],
    human_scores: Sequence[Sequence[float]],
    level: Level = "ordinal",
) -> float:
    """Alpha with the judge as one more rater beside the humans (one row per expert), as the
    paper computes "three human annotators and one LLM output"."""
    return krippendorff_alpha([*human_scores, judge_scores], level)
