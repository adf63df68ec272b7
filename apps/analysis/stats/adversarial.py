"""Adversarial search statistics (methods §6, Chen et al. 2024, AdvEval).

The search's own formulas (S_fb, the 0-100 scale, the success rule with its strict
inequalities) are defined once, in ``apps.judging.adversarial.objective`` (the search needs
them, and judging sits below analysis); they are re-exported here. This module adds what
reports compute from many searches: attack success rates with their Wilson interval and N,
and the gold validation by annotators (accuracy of the gold label against the annotators'
majority, and the annotators' agreement as nominal Krippendorff's alpha with its interval).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

from apps.analysis.stats.agreement import AgreementResult, alpha_with_ci
from apps.analysis.stats.intervals import Estimate, share_interval, share_of
from apps.judging.adversarial.objective import (
    DEFAULT_TAU1,
    DEFAULT_TAU2,
    GOLD_GOOD_THRESHOLD,
    Direction,
    feedback_score,
    gold_label,
    is_success,
    to_percent_scale,
)

Target = Direction

__all__ = [
    "DEFAULT_TAU1",
    "DEFAULT_TAU2",
    "GOLD_GOOD_THRESHOLD",
    "GoldValidation",
    "Target",
    "attack_success_estimate",
    "attack_success_over_results",
    "attack_success_rate",
    "feedback_score",
    "gold_label",
    "gold_validation",
    "gold_validation_accuracy",
    "is_success",
    "majority_label",
    "to_percent_scale",
]


def attack_success_rate(
    outcomes: Sequence[tuple[float, float]], target: Target, tau1: float | None = None
) -> float:
    """Share of (S_gold, S_victim) results that are successful attacks."""
    if not outcomes:
        return math.nan
    return sum(is_success(g, v, target, tau1) for g, v in outcomes) / len(outcomes)


def attack_success_estimate(
    outcomes: Sequence[tuple[float, float]],
    target: Target,
    tau1: float | None = None,
    tau2: float | None = None,
) -> Estimate:
    """:func:`attack_success_rate` with its Wilson interval and N (the attacks)."""
    return share_of([is_success(g, v, target, tau1, tau2) for g, v in outcomes])


def attack_success_over_results(outcomes: Sequence[bool | None]) -> Estimate | None:
    """The attack success rate over the items with a result, with its Wilson interval and N
    (those items). ``None`` marks an item with no result (its search scored no candidate):
    it is left out, never counted as a failed attack; with no result at all, None."""
    results = [outcome for outcome in outcomes if outcome is not None]
    return share_of(results) if results else None


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
        hits += (2 * sum(labels) > len(labels)) == gold_label(gold)
    return hits / len(gold_scores)


def majority_label(labels: Sequence[bool]) -> bool | None:
    """True (good) or False by strict majority; None for a tie or no label."""
    good = sum(labels)
    if 2 * good > len(labels):
        return True
    if 2 * good < len(labels):
        return False
    return None


@dataclass(frozen=True)
class GoldValidation:
    """Gold validation (methods §6): the gold label against the annotators' majority.

    ``accuracy`` is over texts with a majority (N = those texts; ties are left out and
    counted in ``ties``); ``agreement`` is nominal Krippendorff's alpha among the annotators
    with its bootstrap interval and N (texts with two labels or more, annotators);
    ``texts`` counts texts with at least one label.
    """

    accuracy: Estimate
    agreement: AgreementResult
    texts: int
    ties: int


def gold_validation(
    labels: Sequence[tuple[Hashable, Hashable, bool]],
    gold_scores: Mapping[Hashable, float],
    n_resamples: int = 1000,
    seed: int = 0,
) -> GoldValidation:
    """From (text, annotator, good) labels and each text's S_gold: accuracy of the gold label
    (``S_gold >= 50``) against the majority, and alpha (nominal) among the annotators."""
    by_text: dict[Hashable, dict[Hashable, bool]] = defaultdict(dict)
    for text, annotator, good in labels:
        if text in gold_scores:
            by_text[text][annotator] = bool(good)
    hits = ties = 0
    for text, given in by_text.items():
        majority = majority_label(list(given.values()))
        if majority is None:
            ties += 1
        else:
            hits += majority == gold_label(gold_scores[text])
    accuracy = share_interval(hits, len(by_text) - ties)
    return GoldValidation(
        accuracy, _annotator_alpha(by_text, n_resamples, seed), len(by_text), ties
    )


def _annotator_alpha(
    by_text: Mapping[Hashable, Mapping[Hashable, bool]], n_resamples: int, seed: int
) -> AgreementResult:
    texts = list(by_text)
    annotators = sorted({a for given in by_text.values() for a in given}, key=str)
    if not texts or not annotators:
        return AgreementResult(math.nan, math.nan, math.nan, 0, 0)
    matrix = [
        [float(by_text[t][a]) if a in by_text[t] else math.nan for t in texts] for a in annotators
    ]
    return alpha_with_ci(matrix, "nominal", n_resamples=n_resamples, seed=seed)
