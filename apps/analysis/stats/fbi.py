"""FBI judge metrics (methods §3, Doddapaneni et al. 2024), per kind or per ability.

Scores are paired arrays (original, perturbed) of one judge run; a NaN score (unparsed
output) drops its pair. Pairwise verdicts are normalized to what the judge preferred:
"original", "perturbed" or "tie"; ``None`` (unparsed) drops that judgement.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from apps.analysis.stats.intervals import Estimate, share_of

Preference = Literal["original", "perturbed", "tie"]
RawVerdict = Literal["A", "B", "tie"]


def _complete_pairs(
    orig_scores: npt.ArrayLike, pert_scores: npt.ArrayLike
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    orig = np.asarray(orig_scores, dtype=np.float64)
    pert = np.asarray(pert_scores, dtype=np.float64)
    if orig.shape != pert.shape:
        raise ValueError("original and perturbed scores must be paired (same shape)")
    complete = ~(np.isnan(orig) | np.isnan(pert))
    return orig[complete], pert[complete]


def single_answer_failure_rate(orig_scores: npt.ArrayLike, pert_scores: npt.ArrayLike) -> float:
    """Share of perturbed answers scored *not lower* than their original (missed drops).

    The paper words it "score remains unchanged"; docs/methods.md §3 counts a higher score as
    a failure too, which it is.
    """
    orig, pert = _complete_pairs(orig_scores, pert_scores)
    return float(np.mean(pert >= orig)) if orig.size else math.nan


def score_invariant_success_rate(orig_scores: npt.ArrayLike, pert_scores: npt.ArrayLike) -> float:
    """For score-invariant kinds: share of perturbed answers whose score stayed equal."""
    orig, pert = _complete_pairs(orig_scores, pert_scores)
    return float(np.mean(pert == orig)) if orig.size else math.nan


def normalize_pairwise_verdict(verdict: RawVerdict, original_first: bool) -> Preference:
    """Turn a positional verdict ("A" = first response, "B" = second, "tie") into which
    text the judge preferred."""
    if verdict == "tie":
        return "tie"
    if verdict not in ("A", "B"):
        raise ValueError(f"unknown pairwise verdict {verdict!r}")
    first_won = verdict == "A"
    return "original" if first_won == original_first else "perturbed"


@dataclass(frozen=True)
class PairwiseRates:
    """``not_original``: share of judgements (both orders) not choosing the original — the
    failure rate; ``detected_both``: share of pairs where the original won in both orders."""

    not_original: float
    detected_both: float
    n_pairs: int


def pairwise_rates(
    judgements: Sequence[tuple[Preference | None, Preference | None]],
) -> PairwiseRates:
    """FBI pairwise metrics from each pair's two judgements (original first, then swapped).

    A missing judgement (``None``) is left out of ``not_original``; a pair missing either
    judgement is left out of ``detected_both``.
    """
    singles = [p for pair in judgements for p in pair if p is not None]
    complete = [pair for pair in judgements if None not in pair]
    not_original = sum(p != "original" for p in singles) / len(singles) if singles else math.nan
    detected = sum(a == b == "original" for a, b in complete)
    return PairwiseRates(
        not_original=not_original,
        detected_both=detected / len(complete) if complete else math.nan,
        n_pairs=len(complete),
    )


def reference_guided_failure_rate(pert_scores: npt.ArrayLike, max_score: float) -> float:
    """Share of perturbed answers that still get the maximum score with the original as
    reference."""
    pert = np.asarray(pert_scores, dtype=np.float64)
    pert = pert[~np.isnan(pert)]
    return float(np.mean(pert >= max_score)) if pert.size else math.nan


# --- The same rates with their Wilson interval and N (methods §8) ---------------------------------


def single_answer_failure_estimate(
    orig_scores: npt.ArrayLike, pert_scores: npt.ArrayLike
) -> Estimate:
    """:func:`single_answer_failure_rate` with its interval over the complete pairs."""
    orig, pert = _complete_pairs(orig_scores, pert_scores)
    return share_of(pert >= orig)


def score_invariant_success_estimate(
    orig_scores: npt.ArrayLike, pert_scores: npt.ArrayLike
) -> Estimate:
    """:func:`score_invariant_success_rate` with its interval over the complete pairs."""
    orig, pert = _complete_pairs(orig_scores, pert_scores)
    return share_of(pert == orig)


def reference_guided_failure_estimate(pert_scores: npt.ArrayLike, max_score: float) -> Estimate:
    """:func:`reference_guided_failure_rate` with its interval over the scored answers."""
    pert = np.asarray(pert_scores, dtype=np.float64)
    pert = pert[~np.isnan(pert)]
    return share_of(pert >= max_score)


def pairwise_estimates(
    judgements: Sequence[tuple[Preference | None, Preference | None]],
) -> tuple[Estimate, Estimate]:
    """(not_original over single judgements, detected_both over complete pairs), each with its
    interval; see :func:`pairwise_rates`."""
    singles = [p != "original" for pair in judgements for p in pair if p is not None]
    complete = [a == b == "original" for a, b in judgements if a is not None and b is not None]
    return share_of(singles), share_of(complete)
