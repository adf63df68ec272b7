"""Prompting strategies and the misleading cue (methods §5, Chaudhary et al. 2024): how much a
judge's scores agree across strategies, and whether it resists the cue. The cue's rating PR
itself is part of building the prompt (``apps.judging.misleading_cue``).
"""

from collections.abc import Hashable, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from apps.analysis.stats.agreement import (
    AgreementResult,
    Level,
    alpha_with_ci,
    krippendorff_alpha,
)
from apps.analysis.stats.intervals import Estimate, clustered_share, share_of


def match_share_estimate(
    misleading_scores: npt.ArrayLike,
    knowledge_scores: npt.ArrayLike,
    texts: Sequence[Hashable] | None = None,
) -> Estimate:
    """Share of items whose misleading-cue score equals the knowledge-prompt score (pairs
    with a missing score dropped), with its Wilson interval over the complete pairs, or over
    the ``texts`` when given (a text scored on several criteria counts once: the mean of
    each text's share). High means the judge resisted the cue."""
    flags = cue_matches(misleading_scores, knowledge_scores)
    if texts is None:
        return share_of(flags)
    cue = np.asarray(misleading_scores, dtype=np.float64)
    plain = np.asarray(knowledge_scores, dtype=np.float64)
    complete = ~(np.isnan(cue) | np.isnan(plain))
    if len(texts) != complete.size:
        raise ValueError("every pair needs its text")
    return clustered_share(flags, [t for t, c in zip(texts, complete, strict=True) if c])


def cue_matches(
    misleading_scores: npt.ArrayLike, knowledge_scores: npt.ArrayLike
) -> npt.NDArray[np.bool_]:
    """Per complete pair: whether the misleading-cue score equals the knowledge score."""
    cue = np.asarray(misleading_scores, dtype=np.float64)
    plain = np.asarray(knowledge_scores, dtype=np.float64)
    if cue.shape != plain.shape:
        raise ValueError("scores must be paired (same shape)")
    complete = ~(np.isnan(cue) | np.isnan(plain))
    return cue[complete] == plain[complete]


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
