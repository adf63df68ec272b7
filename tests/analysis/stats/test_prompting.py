import math

import krippendorff
import numpy as np
import pytest

from apps.analysis.stats.prompting import (
    judge_consistency,
    judge_human_alpha,
    match_share,
)


def test_match_share_by_hand():
    assert match_share([1, 5, 3, np.nan], [1, 4, 3, 2]) == pytest.approx(2 / 3)
    assert math.isnan(match_share([np.nan], [1]))
    with pytest.raises(ValueError, match="paired"):
        match_share([1, 2], [1])


def test_judge_consistency_uses_strategies_as_raters():
    by_strategy = {
        "zero-shot": [1, 2, 3, 4, 5, 3],
        "knowledge": [1, 2, 3, 5, 5, 3],
        "few-shot": [2, 2, 3, 4, 4, np.nan],
        "chain-of-thought": [1, 3, 3, 4, 5, 2],
    }
    expected = krippendorff.alpha(
        reliability_data=list(by_strategy.values()), level_of_measurement="ordinal"
    )
    assert judge_consistency(by_strategy) == pytest.approx(expected)


def test_judge_human_alpha_adds_the_judge_as_a_rater():
    humans = [[1, 2, 3, 4, 5], [1, 2, 4, 4, 5], [2, 2, 3, 4, 4]]
    judge = [5, 4, 3, 2, 1]
    expected = krippendorff.alpha(reliability_data=[*humans, judge], level_of_measurement="ordinal")
    assert judge_human_alpha(judge, humans) == pytest.approx(expected)
    assert judge_human_alpha(judge, humans) < judge_human_alpha(humans[0], humans)
