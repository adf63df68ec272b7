import math

import pytest

from apps.analysis.stats.adversarial import (
    attack_success_rate,
    feedback_score,
    gold_validation_accuracy,
    is_success,
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
