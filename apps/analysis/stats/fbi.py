"""FBI judge metrics (methods §3, Doddapaneni et al. 2024), per kind or per ability.

Scores are paired arrays (original, perturbed) of one judge run; a NaN score (unparsed
output) drops its pair. Pairwise verdicts arrive as the text the judge preferred
(``apps.judging.scoring.preferred_text``): "original", "perturbed" or "tie"; ``None``
(unparsed) drops that judgement.
"""

from collections.abc import Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt

from apps.analysis.stats.intervals import Estimate, share_of

Preference = Literal["original", "perturbed", "tie"]


def _complete_pairs(
    orig_scores: npt.ArrayLike, pert_scores: npt.ArrayLike
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    orig = np.asarray(orig_scores, dtype=np.float64)
    pert = np.asarray(pert_scores, dtype=np.float64)
    if orig.shape != pert.shape:
        raise ValueError("original and perturbed scores must be paired (same shape)")
    complete = ~(np.isnan(orig) | np.isnan(pert))
    return orig[complete], pert[complete]


# Each rate comes with its Wilson interval and N (methods §8).


def single_answer_failure_estimate(
    orig_scores: npt.ArrayLike, pert_scores: npt.ArrayLike
) -> Estimate:
    """Share of perturbed answers scored *not lower* than their original (missed drops),
    over the complete pairs.

    The paper words it "score remains unchanged"; docs/methods.md §3 counts a higher score as
    a failure too, which it is.
    """
    return share_of(single_answer_failures(orig_scores, pert_scores))


def single_answer_failures(
    orig_scores: npt.ArrayLike, pert_scores: npt.ArrayLike
) -> npt.NDArray[np.bool_]:
    """Per complete pair: whether the perturbed answer was scored *not lower* (a failure)."""
    orig, pert = _complete_pairs(orig_scores, pert_scores)
    return pert >= orig


def score_invariant_success_estimate(
    orig_scores: npt.ArrayLike, pert_scores: npt.ArrayLike
) -> Estimate:
    """For score-invariant kinds: share of perturbed answers whose score stayed equal, over
    the complete pairs."""
    return share_of(score_invariant_successes(orig_scores, pert_scores))


def score_invariant_successes(
    orig_scores: npt.ArrayLike, pert_scores: npt.ArrayLike
) -> npt.NDArray[np.bool_]:
    """Per complete pair of a score-invariant kind: whether the score stayed equal."""
    orig, pert = _complete_pairs(orig_scores, pert_scores)
    return pert == orig


def reference_guided_failure_estimate(pert_scores: npt.ArrayLike, max_score: float) -> Estimate:
    """Share of perturbed answers that still get the maximum score with the original as
    reference, over the scored answers."""
    return share_of(reference_guided_failures(pert_scores, max_score))


def reference_guided_failures(
    pert_scores: npt.ArrayLike, max_score: float
) -> npt.NDArray[np.bool_]:
    """Per scored perturbed answer: whether it still got the maximum score (a failure)."""
    pert = np.asarray(pert_scores, dtype=np.float64)
    pert = pert[~np.isnan(pert)]
    return pert >= max_score


def pairwise_estimates(
    judgements: Sequence[tuple[Preference | None, Preference | None]],
) -> tuple[Estimate, Estimate]:
    """FBI pairwise metrics from each pair's two judgements (original first, then swapped):
    ``not_original``, the share of single judgements not choosing the original (the failure
    rate; an unparsed ``None`` is left out), and ``detected_both``, the share of complete pairs
    where the original won in both orders."""
    singles = [p != "original" for pair in judgements for p in pair if p is not None]
    return share_of(singles), share_of(detected_in_both(judgements))


def detected_in_both(
    judgements: Sequence[tuple[Preference | None, Preference | None]],
) -> list[bool]:
    """Per complete pair (both orders parsed): whether the original won in both orders."""
    return [a == b == "original" for a, b in judgements if a is not None and b is not None]


def order_flips(
    judgements: Sequence[tuple[Preference | None, Preference | None]],
) -> list[bool]:
    """Position bias: per complete pair (both orders parsed), whether the preferred text
    changed when the order was swapped."""
    return [a != b for a, b in judgements if a is not None and b is not None]
