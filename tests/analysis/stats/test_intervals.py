"""Every figure family carries an interval that holds its estimate and narrows as N grows."""

import math

import numpy as np
import pytest

from apps.analysis.stats.adversarial import attack_success_estimate
from apps.analysis.stats.deltas import cell_mean_estimate, score_delta_estimate
from apps.analysis.stats.fbi import (
    pairwise_estimates,
    reference_guided_failure_estimate,
    score_invariant_success_estimate,
    single_answer_failure_estimate,
)
from apps.analysis.stats.intervals import (
    Estimate,
    mean_interval,
    share_interval,
)
from apps.analysis.stats.prompting import match_share_estimate


def _width(estimate: Estimate) -> float:
    return estimate.ci_high - estimate.ci_low


def _holds_and_narrows(small: Estimate, large: Estimate) -> None:
    for e in (small, large):
        assert e.ci_low <= e.value <= e.ci_high
    assert large.n > small.n
    assert _width(large) < _width(small)


def test_wilson_interval_by_hand():
    # 8 of 10: centre (8 + z^2/2) / (10 + z^2), half-width z/(10+z^2) * sqrt(10*.8*.2 + z^2/4)
    z = 1.959963984540054
    centre = (8 + z * z / 2) / (10 + z * z)
    half = z / (10 + z * z) * math.sqrt(10 * 0.8 * 0.2 + z * z / 4)
    found = share_interval(8, 10)
    assert (found.value, found.n) == (0.8, 10)
    assert found.ci_low == pytest.approx(centre - half)
    assert found.ci_high == pytest.approx(centre + half)
    assert share_interval(0, 5).ci_low == 0.0  # never below 0, unlike the Wald interval
    empty = share_interval(0, 0)
    assert empty.n == 0 and math.isnan(empty.value) and math.isnan(empty.ci_low)


def test_shares_narrow_as_n_grows():  # vote shares of expert weights, match rates
    _holds_and_narrows(share_interval(3, 10), share_interval(30, 100))


def test_fbi_failure_and_success_rates():
    rng = np.random.default_rng(1)

    def pairs(n):
        orig = rng.integers(1, 6, n).astype(float)
        return orig, orig - rng.integers(0, 2, n)

    (o1, p1), (o2, p2) = pairs(20), pairs(400)
    _holds_and_narrows(
        single_answer_failure_estimate(o1, p1), single_answer_failure_estimate(o2, p2)
    )
    _holds_and_narrows(
        score_invariant_success_estimate(o1, p1), score_invariant_success_estimate(o2, p2)
    )
    _holds_and_narrows(
        reference_guided_failure_estimate(p1, 5), reference_guided_failure_estimate(p2, 5)
    )
    # a missing score drops its pair from N
    assert single_answer_failure_estimate([5.0, np.nan], [4.0, 4.0]).n == 1


def test_pairwise_rates():
    few = [("original", "perturbed"), ("original", "original"), ("tie", None)] * 3
    many = few * 20
    small, large = pairwise_estimates(few), pairwise_estimates(many)
    assert (small[0].n, small[1].n) == (15, 6)  # judgements, complete pairs
    assert small[0].value == pytest.approx(6 / 15) and small[1].value == pytest.approx(0.5)
    for s, big in zip(small, large, strict=True):
        _holds_and_narrows(s, big)


def test_attack_success_rate():
    outcomes = [(80.0, 20.0), (80.0, 60.0), (90.0, 10.0), (50.0, 0.0)]
    small = attack_success_estimate(outcomes, "R+")
    assert small.value == 0.5
    _holds_and_narrows(small, attack_success_estimate(outcomes * 25, "R+"))


def test_misleading_cue_match_share():
    cue, plain = [1.0, 5.0, 3.0, 2.0, np.nan], [1.0, 4.0, 3.0, 2.0, 3.0]
    small = match_share_estimate(cue, plain)
    assert (small.value, small.n) == (0.75, 4)
    _holds_and_narrows(small, match_share_estimate(cue * 30, plain * 30))


def test_score_deltas_and_s_t_s_f_means_bootstrap_over_units():
    rng = np.random.default_rng(2)
    orig = rng.integers(3, 6, 400).astype(float)
    pert = orig - rng.integers(0, 3, 400)
    small, large = score_delta_estimate(orig[:15], pert[:15]), score_delta_estimate(orig, pert)
    assert small.value == pytest.approx(np.mean(orig[:15] - pert[:15]))
    _holds_and_narrows(small, large)
    deltas = rng.normal(0.8, 0.5, 300)
    _holds_and_narrows(mean_interval(deltas[:12]), mean_interval(deltas))
    assert mean_interval(deltas[:12]) == mean_interval(deltas[:12])  # seeded: same every time


def test_degenerate_means():
    assert math.isnan(mean_interval([]).value)
    one = mean_interval([2.0])
    assert one.value == 2.0 and math.isnan(one.ci_low) and one.n == 1
    same = mean_interval([1.0, 1.0, np.nan])
    assert (same.value, same.ci_low, same.ci_high, same.n) == (1.0, 1.0, 1.0, 2)


def test_s_t_s_f_means_bootstrap_over_items():
    # three cells over items; cell 2 misses half the items. The mean is the mean of the cells'
    # own means; the interval resamples items, and narrows as items grow.
    rng = np.random.default_rng(4)
    big = rng.normal([[1.0], [0.5], [1.5]], 0.6, (3, 400))
    big[2, ::2] = np.nan
    small = big[:, :20]
    found = cell_mean_estimate(small)
    by_hand = np.mean([np.nanmean(row) for row in small])
    assert found.value == pytest.approx(by_hand) and found.n == 20
    _holds_and_narrows(found, cell_mean_estimate(big))
    assert math.isnan(cell_mean_estimate(np.full((2, 3), np.nan)).value)
