import math

import krippendorff
import numpy as np
import pytest

from apps.analysis.stats.prompting import (
    judge_consistency,
    judge_human_alpha,
    match_share_estimate,
)


def test_match_share_by_hand():
    found = match_share_estimate([1, 5, 3, np.nan], [1, 4, 3, 2])
    assert found.value == pytest.approx(2 / 3) and found.n == 3
    assert math.isnan(match_share_estimate([np.nan], [1]).value)
    with pytest.raises(ValueError, match="paired"):
        match_share_estimate([1, 2], [1])


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
    found = judge_consistency(by_strategy, n_resamples=200)
    assert found.value == pytest.approx(expected)
    assert found.n_units == 6 and found.n_raters == 4
    assert found.ci_low <= found.value <= found.ci_high


def test_judge_human_alpha_adds_the_judge_as_a_rater():
    humans = [[1, 2, 3, 4, 5], [1, 2, 4, 4, 5], [2, 2, 3, 4, 4]]
    judge = [5, 4, 3, 2, 1]
    expected = krippendorff.alpha(reliability_data=[*humans, judge], level_of_measurement="ordinal")
    assert judge_human_alpha(judge, humans) == pytest.approx(expected)
    assert judge_human_alpha(judge, humans) < judge_human_alpha(humans[0], humans)
