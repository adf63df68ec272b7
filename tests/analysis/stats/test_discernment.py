import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from apps.analysis.stats.discernment import (
    combined_p,
    combined_p_weighted,
    d_avg,
    d_min,
    discernment,
    expert_weights,
    harmonic_mean_p,
    hmp_pvalue,
    level_weights,
    wilcoxon_p,
)


def test_wilcoxon_all_zero_differences_give_one():
    assert wilcoxon_p([3, 4, 5], [3, 4, 5]) == 1.0
    assert wilcoxon_p([3, np.nan, 5], [3, 1, 5]) == 1.0  # the only differing pair is missing


def test_wilcoxon_exact_small_case_by_hand():
    # differences 1..5, all positive: W+ = 15 is the largest of 2^5 equally likely sign
    # patterns under H0, so the one-sided exact p = 1/32.
    assert wilcoxon_p([2, 4, 6, 8, 10], [1, 2, 3, 4, 5]) == pytest.approx(1 / 32)
    # the opposite direction is not evidence of a drop
    assert wilcoxon_p([1, 2, 3, 4, 5], [2, 4, 6, 8, 10]) == pytest.approx(1.0)


def test_wilcoxon_matches_scipy_and_drops_missing_pairs():
    orig = [4.2, 3.8, 4.0, 4.6, 3.4, 4.4, 3.0, 4.8]
    pert = [3.0, 3.9, 2.2, 4.1, 3.3, 2.9, 3.1, 4.0]
    expected = stats.wilcoxon(orig, pert, alternative="greater").pvalue
    assert wilcoxon_p([*orig, np.nan], [*pert, 1.0]) == pytest.approx(expected)
    assert math.isnan(wilcoxon_p([np.nan], [1.0]))
    with pytest.raises(ValueError, match="paired"):
        wilcoxon_p([1, 2], [1])


def test_combined_p_as_the_paper_writes_it():
    assert combined_p([0.1, 0.1]) == pytest.approx(0.05)  # 1 / (10 + 10)
    assert combined_p([0.05]) == pytest.approx(0.05)
    # not a mean: below the smallest p
    assert combined_p([0.02, 0.5, 0.5]) == pytest.approx(1 / (50 + 2 + 2))
    assert combined_p([0.3, 0.0]) == 0.0
    assert math.isnan(combined_p([0.3, math.nan]))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        combined_p([1.5])


def test_combined_p_weighted_by_hand():
    # 1 / (0.4/0.01 + 0.1/0.2 + 0.5/0.5) = 1 / (40 + 0.5 + 1) = 1 / 41.5
    assert combined_p_weighted([0.01, 0.2, 0.5], [0.4, 0.1, 0.5]) == pytest.approx(1 / 41.5)
    # a zero-weight metric plays no part, even with p = 0 or NaN
    assert combined_p_weighted([0.0, 0.04], [0.0, 1.0]) == pytest.approx(0.04)
    assert combined_p_weighted([math.nan, 0.04], [0.0, 1.0]) == pytest.approx(0.04)
    assert combined_p_weighted([0.0, 0.04], [0.5, 0.5]) == 0.0


def test_uniform_weights_are_m_times_the_unweighted_form():
    p = [0.01, 0.2, 0.5]
    assert combined_p_weighted(p, [1 / 3] * 3) == pytest.approx(3 * combined_p(p))


def test_combined_p_weighted_validates_weights():
    with pytest.raises(ValueError, match="sum to 1"):
        combined_p_weighted([0.1, 0.2], [0.5, 0.6])
    with pytest.raises(ValueError, match="non-negative"):
        combined_p_weighted([0.1, 0.2], [1.5, -0.5])
    with pytest.raises(ValueError, match="one weight"):
        combined_p_weighted([0.1], [0.5, 0.5])
    with pytest.raises(ValueError, match="positive weight"):
        combined_p_weighted([0.1], [0.0], normalized=False)


def test_discernment_is_one_at_five_percent():
    assert discernment(0.05) == pytest.approx(1.0)
    assert discernment(0.05**2) == pytest.approx(2.0)
    assert discernment(1.0) == 0.0 and math.copysign(1, discernment(1.0)) == 1
    assert discernment(0.0) == math.inf
    assert math.isnan(discernment(math.nan))
    assert discernment(combined_p([0.1, 0.1])) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        discernment(-0.1)


def test_d_min():
    assert d_min({"typo": 2.5, "shuffle": 0.7, "fictional": 1.2}) == 0.7
    assert math.isnan(d_min({"typo": 2.5, "shuffle": math.nan}))
    assert math.isnan(d_min({}))


def test_d_avg_level_balanced_by_hand():
    # Three levels, each gets total weight 1/3:
    #   C: c1 = 2.0, c2 = 1.0        -> each weight 1/6 -> (2 + 1)/6        = 0.5
    #   W: w1 = 3.0                  -> weight 1/3      -> 3/3              = 1.0
    #   S: s1 = 0.5, s2 = 1.5, s3 = 1 -> each weight 1/9 -> (0.5+1.5+1)/9   = 1/3
    #   D_avg = 0.5 + 1 + 1/3 = 11/6 (the plain mean over the six kinds would be 9/6).
    ds = {"c1": 2.0, "c2": 1.0, "w1": 3.0, "s1": 0.5, "s2": 1.5, "s3": 1.0}
    levels = {"c1": "C", "c2": "C", "w1": "W", "s1": "S", "s2": "S", "s3": "S"}
    assert level_weights(levels)["s1"] == pytest.approx(1 / 9)
    assert d_avg(ds, levels) == pytest.approx(11 / 6)
    # two levels present: each gets 1/2
    assert d_avg({"c1": 2.0, "w1": 1.0, "w2": 3.0}, {"c1": "C", "w1": "W", "w2": "W"}) == (
        pytest.approx(0.5 * 2.0 + 0.25 * 1.0 + 0.25 * 3.0)
    )
    with pytest.raises(ValueError, match="level"):
        d_avg({"c1": 1.0}, {})
    assert math.isnan(d_avg({}, {}))


@settings(max_examples=80, deadline=None, database=None)
@given(st.dictionaries(st.text(min_size=1, max_size=4), st.sampled_from("CWS"), min_size=1))
def test_level_weights_sum_to_one_and_balance_levels(levels):
    weights = level_weights(levels)
    assert math.fsum(weights.values()) == pytest.approx(1.0)
    present = set(levels.values())
    for level in present:
        share = math.fsum(w for k, w in weights.items() if levels[k] == level)
        assert share == pytest.approx(1 / len(present))


def test_expert_weights_spec_example():
    weights = expert_weights({"coherence": 4, "consistency": 1, "fluency": 5})
    assert weights == pytest.approx({"coherence": 0.4, "consistency": 0.1, "fluency": 0.5})
    assert expert_weights({"coherence": 0, "fluency": 0}) is None  # no opinion: no D^EW
    with pytest.raises(ValueError):
        expert_weights({"coherence": -1, "fluency": 2})


@settings(max_examples=80, deadline=None, database=None)
@given(st.lists(st.integers(0, 20), min_size=1, max_size=6).filter(lambda v: sum(v) > 0))
def test_expert_weights_sum_to_one(votes):
    weights = expert_weights(dict(enumerate(votes)))
    assert weights is not None
    assert math.fsum(weights.values()) == pytest.approx(1.0)


def _simulated_judge(rng, drop):
    """Scores of a judge over 60 items x 3 metrics, mean of R = 5 noisy samples per text.

    The perturbed text loses ``drop`` points of true quality on metric 0 only."""
    quality = rng.uniform(2.0, 5.0, size=(60, 3))
    pert_quality = quality.copy()
    pert_quality[:, 0] -= drop

    def score(q):
        samples = np.clip(np.rint(q[..., None] + rng.normal(0, 0.7, (*q.shape, 5))), 1, 5)
        return samples.mean(axis=-1)

    return score(quality), score(pert_quality)


@pytest.mark.parametrize(("drop", "discerning"), [(1.0, True), (0.0, False)])
def test_synthetic_judge_discernment(drop, discerning):
    rng = np.random.default_rng(7)
    kinds = {"typo": "C", "word_deletion": "W", "shuffle": "S"}
    weights = expert_weights({0: 8, 1: 1, 2: 1})
    assert weights is not None
    ds, ds_ew = {}, {}
    for kind in kinds:
        orig, pert = _simulated_judge(rng, drop)
        p = [wilcoxon_p(orig[:, j], pert[:, j]) for j in range(3)]
        ds[kind] = discernment(combined_p(p))
        ds_ew[kind] = discernment(combined_p_weighted(p, list(weights.values())))
    if discerning:
        assert d_min(ds) >= 1 and d_min(ds_ew) >= 1
    else:
        assert d_avg(ds, kinds) < 1 and d_avg(ds_ew, kinds) < 1


def test_unweighted_d_overstates_significance_under_the_null():
    # docs/methods.md §4 says D >= 1 means significant at 0.05. Under H0 (independent uniform p over
    # M = 4 metrics, as SummEval) the paper's 1 / sum(1/p) reaches it ~30% of the time,
    # while Wilson's HMP (weights summing to 1) stays near the nominal 5%.
    rng = np.random.default_rng(0)
    draws = rng.uniform(size=(4000, 4))
    unweighted = np.mean([discernment(combined_p(list(p))) >= 1 for p in draws])
    uniform = [0.25] * 4
    hmp = np.mean([discernment(combined_p_weighted(list(p), uniform)) >= 1 for p in draws])
    assert unweighted > 0.25
    assert hmp < 0.08


# --- The default combination: Wilson's HMP and its asymptotically exact p-value ---------------


def _landau_tail(x: float, m: int) -> float:
    """The formula of the R package harmonicmeanp written out: P(Landau > x), location
    ln m + 1 + digamma(1) - ln(2/pi), scale pi/2."""
    location = math.log(m) + 1 - np.euler_gamma - math.log(2 / math.pi)
    return float(stats.landau.sf(x, loc=location, scale=math.pi / 2))


def test_harmonic_mean_p_by_hand():
    assert harmonic_mean_p([0.1, 0.1, 0.1]) == pytest.approx(0.1)  # equal p's: that p
    # one small p among four: 1 / (0.25/0.001 + 3 * 0.25/1) = 1 / 250.75
    assert harmonic_mean_p([0.001, 1, 1, 1]) == pytest.approx(1 / 250.75)
    # weights .4 .1 .5 (given unnormalized as 4 1 5): 1 / (40 + 0.5 + 1) = 1 / 41.5
    assert harmonic_mean_p([0.01, 0.2, 0.5], [4, 1, 5]) == pytest.approx(1 / 41.5)
    assert harmonic_mean_p([0.0, 0.5]) == 0.0
    assert math.isnan(harmonic_mean_p([math.nan, 0.5]))
    assert harmonic_mean_p([math.nan, 0.5], [0, 1]) == 0.5  # weight 0: left out


def test_hmp_pvalue_is_the_landau_tail_at_one_over_the_hmp():
    # equal p's of 0.01 over M = 3: HMP = 0.01, p = P(Landau(ln 3 + 0.874, pi/2) > 100)
    assert hmp_pvalue([0.01] * 3) == pytest.approx(_landau_tail(100.0, 3))
    # one small p: the tail at 250.75 with M = 4; slightly above the HMP (the HMP alone is
    # anti-conservative), and close to it (the tail of 1/HMP is about 1/x)
    small = hmp_pvalue([0.001, 1, 1, 1])
    assert small == pytest.approx(_landau_tail(250.75, 4))
    assert 1 / 250.75 < small < 1.2 / 250.75
    # expert weights .4 .1 .5: the tail at 41.5 with M = 3
    assert hmp_pvalue([0.01, 0.2, 0.5], [0.4, 0.1, 0.5]) == pytest.approx(_landau_tail(41.5, 3))


def test_hmp_pvalue_edge_cases():
    assert hmp_pvalue([1.0, 1.0]) == 1.0  # nothing moved: no evidence, D = 0
    assert discernment(hmp_pvalue([1.0] * 4)) == 0.0
    assert hmp_pvalue([0.03]) == 0.03  # one test needs no combining
    assert hmp_pvalue([0.0, 0.4]) == 0.0
    assert math.isnan(hmp_pvalue([math.nan, 0.4]))
    with pytest.raises(ValueError):
        hmp_pvalue([0.1, 0.2], [1.0])
    with pytest.raises(ValueError):
        hmp_pvalue([1.2, 0.2])


def test_the_landau_law_of_one_over_the_hmp_holds_for_many_p_values():
    # 1/HMP of L = 200 independent uniform p's, 40,000 times: its tail matches the Landau law
    rng = np.random.default_rng(3)
    inverse = (1.0 / rng.uniform(size=(40_000, 200))).mean(axis=1)
    for x in (10.0, 20.0, 40.0):
        assert np.mean(inverse > x) == pytest.approx(_landau_tail(x, 200), abs=0.006)


@pytest.mark.parametrize("m", [2, 4, 8])
def test_the_default_is_calibrated_under_the_null(m):
    # p-values of M null metrics: the default's false-positive rate at 0.05 is near 5%,
    # independent or correlated; the published form's is not (M = 4: ~30%)
    rng = np.random.default_rng(100 + m)
    independent = rng.uniform(size=(4000, m))
    shared = rng.standard_normal((4000, 1))
    correlated = stats.norm.sf(0.7 * shared + math.sqrt(1 - 0.49) * rng.standard_normal((4000, m)))
    for draws in (independent, correlated):
        rate = np.mean([discernment(hmp_pvalue(list(p))) >= 1 for p in draws])
        assert 0.03 <= rate <= 0.07
    published = np.mean([discernment(combined_p(list(p))) >= 1 for p in independent])
    assert published > 0.09
