import math

import pytest

from apps.analysis.stats.fbi import (
    pairwise_estimates,
    reference_guided_failure_estimate,
    score_invariant_success_estimate,
    single_answer_failure_estimate,
)

nan = math.nan


def test_single_answer_failure_rate_by_hand():
    # pairs (5,4) detected, (4,4) missed, (3,4) missed (higher is a miss too), (4,nan) dropped
    found = single_answer_failure_estimate([5, 4, 3, 4], [4, 4, 4, nan])
    assert found.value == pytest.approx(2 / 3) and found.n == 3
    assert math.isnan(single_answer_failure_estimate([nan], [1]).value)
    with pytest.raises(ValueError, match="paired"):
        single_answer_failure_estimate([1, 2], [1])


def test_score_invariant_success_rate_by_hand():
    assert score_invariant_success_estimate([5, 4, 3], [5, 3, 3]).value == pytest.approx(2 / 3)
    assert math.isnan(score_invariant_success_estimate([], []).value)


def test_pairwise_rates_by_hand():
    judgements = [
        ("original", "original"),  # detected in both orders
        ("original", "perturbed"),
        ("tie", "original"),
        ("perturbed", "perturbed"),
        ("original", None),  # unparsed second judgement
    ]
    # 9 parsed judgements, 4 not choosing the original (perturbed, tie, perturbed, perturbed)
    # 4 complete pairs, 1 detected in both orders
    not_original, detected_both = pairwise_estimates(judgements)
    assert (not_original.value, not_original.n) == (pytest.approx(4 / 9), 9)
    assert (detected_both.value, detected_both.n) == (0.25, 4)
    empty = pairwise_estimates([])
    assert math.isnan(empty[0].value) and math.isnan(empty[1].value)


def test_reference_guided_failure_rate_by_hand():
    assert reference_guided_failure_estimate([5, 4, 5, nan], max_score=5).value == pytest.approx(
        2 / 3
    )
    assert reference_guided_failure_estimate([3, 3], max_score=3).value == 1.0
    assert math.isnan(reference_guided_failure_estimate([nan], max_score=5).value)
