import math

import pytest

from apps.analysis.stats.fbi import (
    pairwise_estimates,
    pairwise_failure_estimates,
    pairwise_invariant_estimates,
    reference_guided_failure_estimate,
    score_invariant_success_estimate,
    single_answer_failure_estimate,
    without_preference,
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


Z = 1.959963984540054


def _wilson(successes, n):
    p, z2 = successes / n, Z * Z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def test_rates_clustered_by_text_count_each_text_once():
    # texts a, b, c each scored on two criteria: missed 2, 1 and 0 times; d's original is
    # missing (NaN) so its pair drops. Shares 1, 0.5, 0 -> 0.5 over 3 texts, 6 units
    orig = [5, 5, 5, 5, 5, 5, nan]
    pert = [5, 5, 5, 3, 3, 3, 4]
    texts = ["a", "a", "b", "b", "c", "c", "d"]
    found = single_answer_failure_estimate(orig, pert, texts)
    assert (found.value, found.n, found.clusters) == (0.5, 6, 3)
    assert (found.ci_low, found.ci_high) == pytest.approx(_wilson(1.5, 3))
    assert (round(found.ci_low, 4), round(found.ci_high, 4)) == (0.1253, 0.8747)
    plain = single_answer_failure_estimate(orig, pert)  # every pair independent: narrower
    assert (plain.value, plain.n, plain.clusters) == (0.5, 6, 0)
    assert plain.ci_high - plain.ci_low < found.ci_high - found.ci_low
    kept = score_invariant_success_estimate(orig, pert, texts)  # the complement here
    assert (kept.value, kept.clusters) == (0.5, 3)
    with pytest.raises(ValueError, match="text"):
        single_answer_failure_estimate([1, 2], [1, 2], ["a"])


def test_reference_guided_rate_clustered_needs_only_perturbed_scores():
    # a: max on both criteria (share 1), b: not (0), c unscored -> 0.5 over 2 texts, 3 units
    found = reference_guided_failure_estimate([5, 5, 4, nan], 5, ["a", "a", "b", "c"])
    assert (found.value, found.n, found.clusters) == (0.5, 3, 2)
    assert (found.ci_low, found.ci_high) == pytest.approx(_wilson(1, 2))


def test_tie_or_either_by_hand():
    pairs = [
        ("tie", "tie"),  # tied both times: success
        ("original", "perturbed"),  # either text, by position: success
        ("tie", "original"),  # no consistent preference: success
        ("original", "original"),  # prefers the original both times: failure
        ("perturbed", "perturbed"),  # prefers the changed text both times: failure
        ("tie", None),  # one order unparsed: no pair
    ]
    assert without_preference(pairs) == [True, True, True, False, False]
    texts = ["a", "b", "c", "d", "e", "f"]
    tie, either = pairwise_invariant_estimates(pairs, texts)
    # ties per judgement: a 2/2, c 1/2, f 1/1, others 0 -> (1 + 0 + .5 + 0 + 0 + 1) / 6
    assert (tie.value, tie.n, tie.clusters) == (pytest.approx(2.5 / 6), 11, 6)
    assert (either.value, either.n, either.clusters) == (0.6, 5, 5)
    assert (either.ci_low, either.ci_high) == pytest.approx(_wilson(3, 5))


def test_pairwise_failures_are_the_complement_of_detection_in_both_orders():
    pairs = [
        ("original", "original"),
        ("original", "tie"),
        ("tie", "original"),
        ("perturbed", None),
    ]
    not_original, missed = pairwise_failure_estimates(pairs, ["a", "b", "c", "d"])
    # judgements not choosing the original: a 0/2, b 1/2, c 1/2, d 1/1 -> 2 / 4 texts
    assert (not_original.value, not_original.n, not_original.clusters) == (0.5, 7, 4)
    # complete pairs a, b, c: the original chosen twice only in a -> 2 of 3 missed
    assert (missed.value, missed.n, missed.clusters) == (pytest.approx(2 / 3), 3, 3)
    assert (missed.ci_low, missed.ci_high) == pytest.approx(_wilson(2, 3))
