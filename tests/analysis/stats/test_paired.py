"""Paired comparisons of two judges: hand-computed cases and the reference implementations
(scipy.stats; statsmodels is not installed, so McNemar is checked against its definition and
scipy's binomial test)."""

import math

import numpy as np
import pytest
from scipy import stats

from apps.analysis.stats.paired import (
    benjamini_hochberg,
    holm,
    mcnemar_exact,
    paired_bootstrap,
    wilcoxon_paired,
)


def test_mcnemar_counts_only_discordant_pairs():
    # 1 unit only the first judge detected, 6 only the second, 5 both, 3 neither.
    first = [True] * 1 + [False] * 6 + [True] * 5 + [False] * 3
    second = [False] * 1 + [True] * 6 + [True] * 5 + [False] * 3
    result = mcnemar_exact(first, second)
    # two-sided exact: 2 * P(X <= 1), X ~ Bin(7, 1/2) = 2 * (1 + 7) / 128 = 0.125
    assert result.p == pytest.approx(0.125)
    assert result.p == pytest.approx(stats.binomtest(1, 7, 0.5).pvalue)
    assert result.n == 15
    assert result.difference == pytest.approx((1 - 6) / 15)
    assert result.ci_low <= result.difference <= result.ci_high


def test_mcnemar_without_discordance_is_p_one_and_drops_missing():
    result = mcnemar_exact([True, False, None, True], [True, False, True, None])
    assert (result.p, result.n, result.difference) == (1.0, 2, 0.0)
    assert math.isnan(mcnemar_exact([None], [True]).p)


def test_mcnemar_a_clearly_worse_judge_is_significant():
    careful = [True] * 20
    careless = [False] * 12 + [True] * 8
    result = mcnemar_exact(careful, careless)
    assert result.p == pytest.approx(2 * 0.5**12)
    assert result.difference == pytest.approx(0.6)


def test_paired_bootstrap_interval_is_scipys_on_the_differences():
    rng = np.random.default_rng(3)
    a = rng.normal(1.0, 1.0, 40)
    b = a - rng.normal(0.5, 0.3, 40)
    result = paired_bootstrap(a, b)
    reference = stats.bootstrap(
        (a - b,), np.mean, method="percentile", n_resamples=2000, rng=np.random.default_rng(0)
    ).confidence_interval
    assert result.difference == pytest.approx(float(np.mean(a - b)))
    assert (result.ci_low, result.ci_high) == pytest.approx((reference.low, reference.high))
    assert result.n == 40 and result.p < 0.01
    assert paired_bootstrap(a, b) == result  # seeded


def test_paired_bootstrap_of_rates_and_of_no_difference():
    flags_a = [1, 0, 1, 1, 0, 1, 0, 1]
    result = paired_bootstrap(flags_a, flags_a)
    assert (result.difference, result.ci_low, result.ci_high, result.p) == (0, 0, 0, 1.0)
    noisy = paired_bootstrap([1, 0, 1, 0, 1, 0], [0, 1, 1, 0, 0, 1])
    assert noisy.difference == pytest.approx(0.0)
    assert noisy.p > 0.5
    with_nan = paired_bootstrap([1.0, math.nan, 2.0], [0.0, 1.0, 1.0])
    assert with_nan.n == 2 and with_nan.difference == 1.0


def test_wilcoxon_matches_scipy_and_drops_undefined_kinds():
    a = [2.0, 1.5, 3.0, 0.8, 2.2, math.nan, math.inf]
    b = [0.1, 0.2, 0.5, 0.9, 0.3, 1.0, 1.0]
    result = wilcoxon_paired(a, b)
    reference = stats.wilcoxon(a[:5], b[:5]).pvalue
    assert result.p == pytest.approx(reference)
    # hand: differences 1.9, 1.3, 2.5, -0.1, 1.9; W- = 1, n = 5: exact p = 2 * 2/32
    assert result.p == pytest.approx(0.125)
    assert result.n == 5
    assert result.difference == pytest.approx(np.mean([1.9, 1.3, 2.5, -0.1, 1.9]))
    assert wilcoxon_paired([1.0, 2.0], [1.0, 2.0]).p == 1.0


def test_holm_by_hand():
    # sorted 0.01, 0.02, 0.04, 0.3 with m = 4: 0.04, 0.06, 0.08, 0.3
    assert holm([0.04, 0.01, 0.3, 0.02]) == pytest.approx([0.08, 0.04, 0.3, 0.06])
    # monotone: a later step never gets a smaller adjusted p
    assert holm([0.01, 0.011]) == pytest.approx([0.02, 0.02])
    assert holm([0.6, 0.5]) == pytest.approx([1.0, 1.0])
    adjusted = holm([0.01, math.nan])
    assert adjusted[0] == pytest.approx(0.01) and math.isnan(adjusted[1])


def test_benjamini_hochberg_matches_scipy():
    p = [0.04, 0.01, 0.3, 0.02, 0.049]
    assert benjamini_hochberg(p) == pytest.approx(list(stats.false_discovery_control(p)))
    # by hand: m = 5, sorted 0.01 .02 .04 .049 .3 -> .05 .05 .06125 .06125 .3
    assert benjamini_hochberg(p) == pytest.approx([0.06125, 0.05, 0.3, 0.05, 0.06125])
