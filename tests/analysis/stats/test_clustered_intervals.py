"""Intervals over clustered units (a text scored on several criteria): each text counts once,
so scoring the same texts on more criteria never narrows an interval."""

import math

import numpy as np
import pytest

from apps.analysis.stats.intervals import (
    clustered_mean,
    clustered_share,
    mean_interval,
    perfect_share_bound,
    share_interval,
    wilson,
)

Z2 = 1.959963984540054**2


def test_wilson_matches_scipy_on_whole_numbers():
    for successes, n in ((0, 14), (3, 10), (10, 10), (57, 120)):
        expected = share_interval(successes, n)
        assert wilson(successes, n) == pytest.approx((expected.ci_low, expected.ci_high))


def test_clustered_share_by_hand():
    # three texts: 1 of 2 criteria missed, 0 of 4, 1 of 1 -> shares .5, 0, 1 -> mean .5 over 3
    flags = [1, 0, 0, 0, 0, 0, 1]
    texts = ["a", "a", "b", "b", "b", "b", "c"]
    found = clustered_share(flags, texts)
    assert (found.value, found.n, found.clusters, found.effective_n) == (0.5, 7, 3, 3)
    assert (found.ci_low, found.ci_high) == pytest.approx(wilson(1.5, 3))


def test_a_perfect_judge_on_fourteen_texts_by_eleven_criteria_counts_fourteen():
    flags = [0.0] * 154
    texts = [i // 11 for i in range(154)]
    found = clustered_share(flags, texts)
    assert (found.value, found.n, found.clusters, found.ci_low) == (0.0, 154, 14, 0.0)
    assert found.ci_high == pytest.approx(Z2 / (14 + Z2))  # 0.215, not 0.024 as 154 would give
    assert perfect_share_bound(14, 0.0) == pytest.approx(found.ci_high)
    assert perfect_share_bound(14, 1.0) == pytest.approx(1 - found.ci_high)


def test_one_unit_per_cluster_is_the_plain_share():
    flags = [1, 0, 1, 1, 0, 0, 0, 1, 0, 0]
    found = clustered_share(flags, list(range(10)))
    plain = share_interval(4, 10)
    assert (found.value, found.ci_low, found.ci_high) == pytest.approx(
        (plain.value, plain.ci_low, plain.ci_high)
    )
    nan = clustered_share([math.nan, 1.0], ["a", "b"])  # an unmeasured unit is dropped
    assert (nan.n, nan.clusters, nan.value) == (1, 1, 1.0)
    assert math.isnan(clustered_share([], []).value)


def test_copying_units_within_texts_does_not_narrow_the_mean_interval():
    rng = np.random.default_rng(1)
    per_text = rng.normal(1.0, 1.0, size=20)
    once = clustered_mean(per_text, list(range(20)))
    eleven = clustered_mean(np.repeat(per_text, 11), np.repeat(np.arange(20), 11).tolist())
    naive = mean_interval(np.repeat(per_text, 11))
    assert eleven.value == pytest.approx(once.value)
    assert (eleven.n, eleven.clusters) == (220, 20)
    assert eleven.ci_high - eleven.ci_low == pytest.approx(once.ci_high - once.ci_low, rel=0.01)
    assert naive.ci_high - naive.ci_low < 0.5 * (eleven.ci_high - eleven.ci_low)


def test_clustered_mean_edges():
    one = clustered_mean([1.0, 3.0], ["a", "a"])
    assert (one.value, one.n, one.clusters) == (2.0, 2, 1) and math.isnan(one.ci_low)
    flat = clustered_mean([2.0, 2.0, 2.0], ["a", "b", "c"])
    assert (flat.ci_low, flat.ci_high) == (2.0, 2.0)
    with pytest.raises(ValueError):
        clustered_mean([1.0], ["a", "b"])
