"""FBI judge metrics (methods §3, Doddapaneni et al. 2024), per kind or per ability.

Scores are paired arrays (original, perturbed) of one judge run; a NaN score (unparsed
output, or an original the run never scored) drops its pair. Pairwise verdicts arrive as the
text the judge preferred (``apps.judging.scoring.preferred_text``): "original", "perturbed" or
"tie"; ``None`` (unparsed) drops that judgement.

**Clustered by text.** A perturbed text scored on several criteria (or samples, or in both
orders) gives several units that are not independent. Every estimate takes an optional
``texts``, the perturbed text of each unit (pair, score or judgement pair): with it the rate
is :func:`~apps.analysis.stats.intervals.clustered_share`, the mean of each text's share with
the Wilson interval over the texts (``n``: units, ``clusters``: texts); without it every unit
counts as independent.
"""

from collections.abc import Hashable, Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt

from apps.analysis.stats.intervals import Estimate, clustered_share, share_of

Preference = Literal["original", "perturbed", "tie"]
Judgements = tuple[Preference | None, Preference | None]
Texts = Sequence[Hashable] | None


def _texts(texts: Texts, n: int) -> list[Hashable]:
    if texts is None:
        return list(range(n))
    if len(texts) != n:
        raise ValueError("every unit needs its text")
    return list(texts)


def _estimate(flags: Sequence[bool] | npt.NDArray[np.bool_], texts: Texts) -> Estimate:
    """The share of true flags; clustered by ``texts`` unless None."""
    if texts is None:
        return share_of(np.asarray(flags, dtype=np.float64))
    return clustered_share(np.asarray(flags, dtype=np.float64), texts)


def _complete_pairs(
    orig_scores: npt.ArrayLike, pert_scores: npt.ArrayLike
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
    """The complete pairs' scores, and which pairs of the input were complete."""
    orig = np.asarray(orig_scores, dtype=np.float64)
    pert = np.asarray(pert_scores, dtype=np.float64)
    if orig.shape != pert.shape:
        raise ValueError("original and perturbed scores must be paired (same shape)")
    complete = ~(np.isnan(orig) | np.isnan(pert))
    return orig[complete], pert[complete], complete


def _kept(texts: Texts, kept: npt.NDArray[np.bool_]) -> list[Hashable] | None:
    """The texts of the units kept (None: not clustered)."""
    if texts is None:
        return None
    return [k for k, c in zip(_texts(texts, kept.size), kept, strict=True) if c]


# Each rate comes with its Wilson interval and N (methods §8).


def single_answer_failure_estimate(
    orig_scores: npt.ArrayLike, pert_scores: npt.ArrayLike, texts: Texts = None
) -> Estimate:
    """Share of perturbed answers scored *not lower* than their original (missed drops),
    over the complete pairs; clustered by ``texts`` when given.

    The paper words it "score remains unchanged"; docs/methods.md §3 counts a higher score as
    a failure too, which it is.
    """
    kept = _complete_pairs(orig_scores, pert_scores)[2]
    return _estimate(single_answer_failures(orig_scores, pert_scores), _kept(texts, kept))


def single_answer_failures(
    orig_scores: npt.ArrayLike, pert_scores: npt.ArrayLike
) -> npt.NDArray[np.bool_]:
    """Per complete pair: whether the perturbed answer was scored *not lower* (a failure)."""
    orig, pert, _ = _complete_pairs(orig_scores, pert_scores)
    return pert >= orig


def score_invariant_success_estimate(
    orig_scores: npt.ArrayLike, pert_scores: npt.ArrayLike, texts: Texts = None
) -> Estimate:
    """For score-invariant kinds: share of perturbed answers whose score stayed equal, over
    the complete pairs; clustered by ``texts`` when given."""
    kept = _complete_pairs(orig_scores, pert_scores)[2]
    return _estimate(score_invariant_successes(orig_scores, pert_scores), _kept(texts, kept))


def score_invariant_successes(
    orig_scores: npt.ArrayLike, pert_scores: npt.ArrayLike
) -> npt.NDArray[np.bool_]:
    """Per complete pair of a score-invariant kind: whether the score stayed equal."""
    orig, pert, _ = _complete_pairs(orig_scores, pert_scores)
    return pert == orig


def reference_guided_failure_estimate(
    pert_scores: npt.ArrayLike, max_score: float, texts: Texts = None
) -> Estimate:
    """Share of perturbed answers that still get the maximum score with the original as
    reference, over the scored answers: it needs no score of the original. Clustered by
    ``texts`` when given. For score-invariant kinds the same share is a success."""
    scored = ~np.isnan(np.asarray(pert_scores, dtype=np.float64))
    return _estimate(reference_guided_failures(pert_scores, max_score), _kept(texts, scored))


def reference_guided_failures(
    pert_scores: npt.ArrayLike, max_score: float
) -> npt.NDArray[np.bool_]:
    """Per scored perturbed answer: whether it still got the maximum score (a failure)."""
    pert = np.asarray(pert_scores, dtype=np.float64)
    pert = pert[~np.isnan(pert)]
    return pert >= max_score


def _judgements(
    pairs: Sequence[Judgements], texts: Texts
) -> tuple[list[Preference], list[Hashable]]:
    """Every parsed single judgement, with its text."""
    keys = _texts(texts, len(pairs))
    found = [(p, key) for pair, key in zip(pairs, keys, strict=True) for p in pair if p]
    return [p for p, _ in found], [key for _, key in found]


def _complete(pairs: Sequence[Judgements], texts: Texts) -> tuple[list[Judgements], list]:
    """The pairs judged in both orders (both parsed), with their texts."""
    keys = _texts(texts, len(pairs))
    found = [(pair, key) for pair, key in zip(pairs, keys, strict=True) if None not in pair]
    return [pair for pair, _ in found], [key for _, key in found]


def pairwise_estimates(
    judgements: Sequence[Judgements], texts: Texts = None
) -> tuple[Estimate, Estimate]:
    """FBI pairwise metrics from each pair's two judgements (original first, then swapped):
    ``not_original``, the share of single judgements not choosing the original (the failure
    rate; an unparsed ``None`` is left out), and ``detected_both``, the share of complete pairs
    where the original won in both orders. Clustered by ``texts`` when given."""
    singles, single_texts = _judgements(judgements, texts)
    complete, pair_texts = _complete(judgements, texts)
    clustered = texts is not None
    return (
        _estimate([p != "original" for p in singles], single_texts if clustered else None),
        _estimate(detected_in_both(complete), pair_texts if clustered else None),
    )


def pairwise_failure_estimates(
    judgements: Sequence[Judgements], texts: Texts = None
) -> tuple[Estimate, Estimate]:
    """For kinds that should lower the score: the share of single judgements not choosing the
    original, and the share of complete pairs where the original was *not* chosen in both
    orders (the complement of ``detected_both``). Clustered by ``texts`` when given."""
    not_original, detected = pairwise_estimates(judgements, texts)
    missed = Estimate(
        1 - detected.value, 1 - detected.ci_high, 1 - detected.ci_low, detected.n, detected.clusters
    )
    return not_original, missed


def pairwise_invariant_estimates(
    judgements: Sequence[Judgements], texts: Texts = None
) -> tuple[Estimate, Estimate]:
    """For score-invariant kinds (both texts deserve the same verdict), two successes: the
    share of single judgements answering "tie", and the share of complete pairs *tied or
    either*, where the judge showed no consistent preference (:func:`without_preference`).
    Clustered by ``texts`` when given."""
    singles, single_texts = _judgements(judgements, texts)
    complete, pair_texts = _complete(judgements, texts)
    clustered = texts is not None
    return (
        _estimate([p == "tie" for p in singles], single_texts if clustered else None),
        _estimate(without_preference(complete), pair_texts if clustered else None),
    )


def without_preference(judgements: Sequence[Judgements]) -> list[bool]:
    """Per complete pair (both orders parsed): whether the judge showed no consistent
    preference, "tie or either": the two verdicts do not name the same text. A tie in either
    order, or the original in one order and the perturbed text in the other (either text will
    do), counts; the same text chosen in both orders does not."""
    return [not (a == b != "tie") for a, b in judgements if a is not None and b is not None]


def detected_in_both(
    judgements: Sequence[Judgements],
) -> list[bool]:
    """Per complete pair (both orders parsed): whether the original won in both orders."""
    return [a == b == "original" for a, b in judgements if a is not None and b is not None]


def order_flips(
    judgements: Sequence[Judgements],
) -> list[bool]:
    """Position bias: per complete pair (both orders parsed), whether the preferred text
    changed when the order was swapped."""
    return [a != b for a, b in judgements if a is not None and b is not None]
