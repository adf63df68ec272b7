import math

import pytest

from apps.analysis.stats.fbi import (
    PairwiseRates,
    normalize_pairwise_verdict,
    pairwise_rates,
    reference_guided_failure_rate,
    score_invariant_success_rate,
    single_answer_failure_rate,
)

nan = math.nan


def test_single_answer_failure_rate_by_hand():
    # pairs (5,4) detected, (4,4) missed, (3,4) missed (higher is a miss too), (4,nan) dropped
    assert single_answer_failure_rate([5, 4, 3, 4], [4, 4, 4, nan]) == pytest.approx(2 / 3)
    assert math.isnan(single_answer_failure_rate([nan], [1]))
    with pytest.raises(ValueError, match="paired"):
        single_answer_failure_rate([1, 2], [1])


def test_score_invariant_success_rate_by_hand():
    assert score_invariant_success_rate([5, 4, 3], [5, 3, 3]) == pytest.approx(2 / 3)
    assert math.isnan(score_invariant_success_rate([], []))


@pytest.mark.parametrize(
    ("verdict", "original_first", "preference"),
    [
        ("A", True, "original"),
        ("B", True, "perturbed"),
        ("A", False, "perturbed"),
        ("B", False, "original"),
        ("tie", True, "tie"),
        ("tie", False, "tie"),
    ],
)
def test_normalize_pairwise_verdict(verdict, original_first, preference):
    assert normalize_pairwise_verdict(verdict, original_first) == preference


def test_normalize_pairwise_verdict_rejects_unknown():
    with pytest.raises(ValueError):
        normalize_pairwise_verdict("C", True)  # type: ignore[arg-type]


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
    assert pairwise_rates(judgements) == PairwiseRates(
        not_original=pytest.approx(4 / 9), detected_both=0.25, n_pairs=4
    )
    empty = pairwise_rates([])
    assert math.isnan(empty.not_original) and math.isnan(empty.detected_both)


def test_reference_guided_failure_rate_by_hand():
    assert reference_guided_failure_rate([5, 4, 5, nan], max_score=5) == pytest.approx(2 / 3)
    assert reference_guided_failure_rate([3, 3], max_score=3) == 1.0
    assert math.isnan(reference_guided_failure_rate([nan], max_score=5))
