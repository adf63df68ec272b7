import math

import pytest

from apps.analysis.stats.adversarial import (
    attack_success_estimate,
    attack_success_rate,
    feedback_score,
    gold_validation,
    gold_validation_accuracy,
    is_success,
    majority_label,
    to_percent_scale,
)


def test_feedback_score_by_hand():
    assert feedback_score(80, 30, "R+") == 50  # 1*80 - 30
    assert feedback_score(20, 75, "R-") == 55  # 75 - 1*20
    assert feedback_score(40, 30, "R+", alpha=2) == 50  # 2*40 - 30
    with pytest.raises(ValueError):
        feedback_score(1, 2, "R0")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("gold", "victim", "target", "success"),
    [
        (80, 30, "R+", True),
        (70, 20, "R+", False),  # gold must exceed 70 strictly
        (80, 40, "R+", False),  # gap must exceed 40 strictly
        (20, 70, "R-", True),
        (30, 80, "R-", False),  # gold must be below 30 strictly
        (20, 60, "R-", False),
    ],
)
def test_success_rules(gold, victim, target, success):
    assert is_success(gold, victim, target) is success


def test_attack_success_rate_and_custom_tau():
    outcomes = [(80, 30), (70, 20), (90, 10), (50, 0)]
    assert attack_success_rate(outcomes, "R+") == 0.5
    assert attack_success_rate(outcomes, "R+", tau1=40) == 1.0
    assert math.isnan(attack_success_rate([], "R-"))


def test_to_percent_scale():
    assert to_percent_scale(3, 1, 5) == 50
    assert to_percent_scale(10, 0, 10) == 100
    with pytest.raises(ValueError):
        to_percent_scale(1, 5, 5)


def test_gold_validation_accuracy_by_hand():
    labels = [[True, True, False], [False, False, True], [True, False, False]]
    gold = [75.0, 40.0, 50.0]  # good, not good, good (>= 50)
    assert gold_validation_accuracy(labels, gold) == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="odd"):
        gold_validation_accuracy([[True, False]], [60.0])


# -- the search's edges (strict inequalities), hand-computed -----------------------------------


@pytest.mark.parametrize(
    ("gold", "victim", "direction", "alpha", "expected"),
    [
        (70, 70, "R+", 1.0, 0.0),  # no disagreement
        (100, 0, "R+", 1.0, 100.0),
        (0, 100, "R-", 1.0, 100.0),
        (50, 20, "R+", 0.5, 5.0),  # 0.5 * 50 - 20
        (50, 20, "R-", 0.5, -5.0),  # 20 - 0.5 * 50
    ],
)
def test_feedback_score_edges(gold, victim, direction, alpha, expected):
    assert feedback_score(gold, victim, direction, alpha) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("gold", "victim", "direction", "success"),
    [
        (70.0001, 30.0, "R+", True),  # just above both thresholds
        (70.0, 0.0, "R+", False),  # S_gold = tau1: not above it
        (90.0, 50.0, "R+", False),  # gap = tau2: not above it
        (90.0, 49.999, "R+", True),
        (29.999, 70.0, "R-", True),
        (30.0, 100.0, "R-", False),  # S_gold = tau1: not below it
        (10.0, 50.0, "R-", False),  # gap = tau2
        (10.0, 50.001, "R-", True),
        (90.0, 10.0, "R-", False),  # a good text is no R- success
        (10.0, 90.0, "R+", False),  # a poor one no R+ success
    ],
)
def test_success_at_the_thresholds(gold, victim, direction, success):
    assert is_success(gold, victim, direction) is success


def test_success_with_other_thresholds():
    assert is_success(61, 30, "R+", tau1=60, tau2=30)
    assert not is_success(61, 31, "R+", tau1=60, tau2=30)
    with pytest.raises(ValueError, match="direction"):
        is_success(80, 10, "R0")


def test_attack_success_estimate_is_wilson_with_n():
    outcomes = [(80, 30), (90, 10), (75, 20), (70, 0)]  # 3 successes of 4 (70 is not > 70)
    estimate = attack_success_estimate(outcomes, "R+")
    z = 1.959963984540054
    n, p = 4, 0.75
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert (estimate.value, estimate.n) == (0.75, 4)
    assert estimate.ci_low == pytest.approx(centre - half)
    assert estimate.ci_high == pytest.approx(centre + half)
    empty = attack_success_estimate([], "R-")
    assert empty.n == 0 and math.isnan(empty.value)


def test_gold_validation_by_hand():
    """Four texts, three annotators each (A, B, C; True = good):

    t1: good good good   S_gold 80 (good)      majority good: agrees
    t2: bad  bad  bad    S_gold 20 (not good)  agrees
    t3: good good bad    S_gold 45 (not good)  disagrees
    t4: bad  bad  good   S_gold 10             agrees        -> accuracy 3/4

    Nominal alpha from the coincidences (each unit's 3*2 ordered pairs weighted 1/2):
    o(good,good) = 3 + 1 = 4, o(bad,bad) = 3 + 1 = 4, o(good,bad) = o(bad,good) = 2; n = 12,
    n_good = n_bad = 6. D_o = 4/12, D_e = 2*6*6 / (12*11) = 6/11, alpha = 1 - (1/3)/(6/11)
    = 7/18.
    """
    labels = [
        ("t1", "A", True), ("t1", "B", True), ("t1", "C", True),
        ("t2", "A", False), ("t2", "B", False), ("t2", "C", False),
        ("t3", "A", True), ("t3", "B", True), ("t3", "C", False),
        ("t4", "A", False), ("t4", "B", False), ("t4", "C", True),
    ]  # fmt: skip
    result = gold_validation(labels, {"t1": 80, "t2": 20, "t3": 45, "t4": 10})
    assert (result.accuracy.value, result.accuracy.n, result.texts, result.ties) == (0.75, 4, 4, 0)
    assert result.agreement.value == pytest.approx(7 / 18)
    assert (result.agreement.n_units, result.agreement.n_raters) == (4, 3)
    assert result.agreement.ci_low <= 7 / 18 <= result.agreement.ci_high


def test_gold_validation_leaves_ties_out_of_accuracy():
    labels = [("t1", "A", True), ("t1", "B", False), ("t2", "A", True), ("t2", "B", True)]
    result = gold_validation(labels, {"t1": 90, "t2": 50})  # S_gold 50 is good
    assert (result.accuracy.value, result.accuracy.n, result.ties) == (1.0, 1, 1)
    assert majority_label([True, False]) is None and majority_label([]) is None
