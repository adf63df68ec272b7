"""Best-worst scaling: scores, split-half reliability, a judge against BWS (issue 38)."""

import math
from itertools import combinations

import numpy as np
import pytest
from scipy import stats

from apps.analysis.stats.agreement import kendall_with_ci, spearman_with_ci
from apps.analysis.stats.bws import (
    CONSTANT,
    NO_ANNOTATIONS,
    TOO_FEW,
    BwsAnnotation,
    BwsScore,
    bws_rank_correlation,
    bws_scores,
    spearman_brown,
    split_half_reliability,
)

# Four texts; tuples of 4 and 3.
#   a: shown in 0, 1, 2 (3); best in 0, 2 (2); worst never  -> (2 - 0) / 3 =  2/3
#   b: shown in 0, 1, 2, 3 (4); best in 1; worst never      -> (1 - 0) / 4 =  1/4
#   c: shown in 0, 1, 2, 3 (4); best in 3; worst in 2       -> (1 - 1) / 4 =  0
#   d: shown in 0, 1, 3 (3); best never; worst in 0, 1, 3   -> (0 - 3) / 3 = -1
BY_HAND = [
    (("a", "b", "c", "d"), "a", "d", "ann1"),
    (("a", "b", "c", "d"), "b", "d", "ann2"),
    (("a", "b", "c"), "a", "c", "ann1"),
    (("b", "c", "d"), "c", "d", "ann2"),
]


def consistent(tuples, truth, annotators=1, noise=0.0, seed=0):
    """Annotations picking the best and worst by ``truth`` plus normal noise."""
    rng = np.random.default_rng(seed)
    rows = []
    for shown in tuples:
        for annotator in range(annotators):
            seen = [truth[t] + rng.normal(scale=noise) for t in shown]
            best, worst = shown[int(np.argmax(seen))], shown[int(np.argmin(seen))]
            rows.append(BwsAnnotation(shown, best, worst, annotator))
    return rows


def test_scores_by_hand():
    scores = bws_scores(BY_HAND)
    assert scores == {
        "a": BwsScore(best=2, worst=0, appearances=3),
        "b": BwsScore(best=1, worst=0, appearances=4),
        "c": BwsScore(best=1, worst=1, appearances=4),
        "d": BwsScore(best=0, worst=3, appearances=3),
    }
    assert [scores[t].score for t in "abcd"] == pytest.approx([2 / 3, 1 / 4, 0, -1])
    assert "e" not in bws_scores([*BY_HAND, (("a", "b"), "a", "b", "x")])  # never shown
    assert bws_scores([]) == {}


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ((("a", "b", "a"), "a", "b", "x"), "annotation 4 shows 'a' twice"),
        ((("a", "b", "c"), "z", "b", "x"), "annotation 4: best 'z' is not among those shown"),
        ((("a", "b", "c"), "a", "z", "x"), "annotation 4: worst 'z' is not among those shown"),
        ((("a", "b", "c"), "b", "b", "x"), "annotation 4: best and worst are the same text 'b'"),
    ],
)
def test_bad_annotations_are_named(row, message):
    for compute in (bws_scores, split_half_reliability):
        with pytest.raises(ValueError, match=message):
            compute([*BY_HAND, row])


def test_consistent_annotators_split_half_is_one():
    # Every 4-tuple of 8 texts, each judged by two people who agree with the truth. A split
    # deals each tuple's two annotations to the two halves, so the halves' scores are equal.
    texts = list("abcdefgh")
    truth = {t: i for i, t in enumerate(texts)}
    result = split_half_reliability(consistent(list(combinations(texts, 4)), truth, 2))
    assert (result.value, result.spearman_brown) == (1.0, 1.0)
    assert (result.split_low, result.split_high, result.ci_low, result.ci_high) == (1, 1, 1, 1)
    assert set(result.per_split) == {1.0}
    assert (result.n_texts, result.n_compared, result.n_annotations) == (8, 8, 140)
    assert (result.splits, result.undefined_splits, result.reason) == (100, 0, "")


def test_one_annotation_a_tuple_splits_the_tuples():
    texts = list(range(60))
    truth = {t: t for t in texts}
    tuples = [tuple(texts[(i + k * 7) % 60] for k in range(4)) for i in range(120)]
    result = split_half_reliability(consistent(tuples, truth, noise=5), splits=40)
    assert result.n_annotations == 120 and result.undefined_splits == 0
    assert 0.5 < result.value < 0.99  # halves of distinct tuples: high, not identical
    assert result.split_low <= result.value <= result.split_high
    assert result.ci_low <= result.value <= result.ci_high
    assert result.spearman_brown == pytest.approx(2 * result.value / (1 + result.value))


def test_noise_lowers_reliability_and_more_annotators_raise_it():
    texts = list(range(80))
    truth = dict(zip(texts, np.random.default_rng(1).normal(size=80), strict=True))
    tuples = [tuple(texts[(i + k * 9) % 80] for k in range(4)) for i in range(160)]
    low = split_half_reliability(consistent(tuples, truth, 2, noise=2.0), splits=30)
    high = split_half_reliability(consistent(tuples, truth, 2, noise=0.3), splits=30)
    more = split_half_reliability(consistent(tuples, truth, 6, noise=2.0), splits=30)
    assert low.value < high.value and low.value < more.value
    # the sampling interval carries the split's spread and more
    assert high.ci_high - high.ci_low > high.split_high - high.split_low


def test_random_picks_are_unreliable():
    rng = np.random.default_rng(2)
    texts = list(range(200))
    tuples = [tuple(int(t) for t in rng.choice(200, 4, replace=False)) for _ in range(400)]
    picks = [rng.choice(4, 2, replace=False) for _ in range(800)]
    rows = [(s, s[p[0]], s[p[1]], 0) for s, p in zip(tuples * 2, picks, strict=True)]
    result = split_half_reliability(rows, splits=30)
    assert abs(result.value) < 0.15 and result.ci_low < 0 < result.ci_high
    assert result.n_texts == len({t for s in tuples for t in s}) <= len(texts)


def test_each_split_is_spearman_of_the_halves_scores():
    # Reference: with two copies of every annotation each half holds one copy of each, so
    # its scores are bws_scores of the whole; rho by scipy against itself is 1.
    rows = consistent(list(combinations(range(7), 4)), {t: t % 3 for t in range(7)}, noise=1)
    scores = bws_scores(rows)
    result = split_half_reliability([*rows, *rows], splits=5)
    values = [s.score for s in scores.values()]
    assert result.per_split == (float(stats.spearmanr(values, values).statistic),) * 5


def test_deterministic_for_a_seed():
    rows = consistent(
        [tuple(range(i, i + 4)) for i in range(20)], dict.fromkeys(range(24), 0), 2, 1
    )
    assert split_half_reliability(rows, seed=5) == split_half_reliability(rows, seed=5)
    assert split_half_reliability(rows, seed=5) != split_half_reliability(rows, seed=6)


def test_undefined_cases_give_nan_and_a_reason():
    empty = split_half_reliability([])
    assert math.isnan(empty.value) and empty.reason == NO_ANNOTATIONS
    one = split_half_reliability(BY_HAND[:1])
    assert math.isnan(one.spearman_brown) and one.reason == TOO_FEW
    assert (one.n_texts, one.n_annotations, one.undefined_splits) == (4, 1, 100)
    # a beats b, b beats c, c beats a, each twice: every text scores 0 in both halves
    cycle = [(("a", "b"), "a", "b", 1), (("b", "c"), "b", "c", 1), (("c", "a"), "c", "a", 1)]
    flat = split_half_reliability(cycle * 2, splits=10)
    assert math.isnan(flat.value) and math.isnan(flat.ci_low) and flat.reason == CONSTANT


def test_refuses_bad_settings():
    with pytest.raises(ValueError, match="at least one split"):
        split_half_reliability(BY_HAND, splits=0)
    with pytest.raises(ValueError, match="confidence"):
        split_half_reliability(BY_HAND, confidence=1.0)


def test_spearman_brown():
    assert spearman_brown(0.5) == pytest.approx(2 / 3)
    assert (spearman_brown(1.0), spearman_brown(0.0)) == (1.0, 0.0)
    assert math.isnan(spearman_brown(-1.0))


def test_judge_against_bws_matches_scipy():
    rng = np.random.default_rng(3)
    texts = list(range(40))
    truth = dict(zip(texts, rng.normal(size=40), strict=True))
    scores = bws_scores(consistent(list(combinations(texts, 4))[::50], truth, noise=0.5))
    judge = {t: truth[t] + rng.normal() for t in texts}
    judge[texts[0]] = math.nan  # not scored by the judge: left out
    judge["other"] = 1.0  # no BWS score: left out
    result = bws_rank_correlation(judge, scores)
    common = [t for t in scores if t != texts[0]]
    xs, ys = [judge[t] for t in common], [scores[t].score for t in common]
    n = len(common)
    assert result.spearman.n == result.kendall.n == n
    rho = stats.spearmanr(xs, ys).statistic
    tau = stats.kendalltau(xs, ys).statistic  # tau-b
    assert result.spearman.value == pytest.approx(rho)
    assert result.kendall.value == pytest.approx(tau)
    # Fisher z: Bonett & Wright's standard error for rho, Fieller's for tau
    z = stats.norm.ppf(0.975)
    se_rho, se_tau = math.sqrt((1 + rho**2 / 2) / (n - 3)), math.sqrt(0.437 / (n - 4))
    fisher = result.spearman_fisher
    assert fisher.value == result.spearman.value and fisher.n == n
    assert fisher.ci_low == pytest.approx(math.tanh(math.atanh(rho) - z * se_rho))
    assert fisher.ci_high == pytest.approx(math.tanh(math.atanh(rho) + z * se_rho))
    # SPEC's interval: a percentile bootstrap over the texts, as scipy's (paired) computes it
    boot = stats.bootstrap(
        (np.array(xs), np.array(ys)),
        lambda x, y, axis: (
            stats.spearmanr(x, y, axis=axis).statistic
            if np.ndim(x) == 1
            else np.array([stats.spearmanr(a, b).statistic for a, b in zip(x, y, strict=True)])
        ),
        paired=True,
        vectorized=True,
        method="percentile",
        n_resamples=2000,
        random_state=1,
    ).confidence_interval
    assert result.spearman.ci_low == pytest.approx(boot.low, abs=0.03)
    assert result.spearman.ci_high == pytest.approx(boot.high, abs=0.03)
    assert result.spearman.ci_low < rho < result.spearman.ci_high
    assert result.kendall.ci_low == pytest.approx(math.tanh(math.atanh(tau) - z * se_tau))
    assert result.kendall.ci_high == pytest.approx(math.tanh(math.atanh(tau) + z * se_tau))


def test_rank_correlation_degenerate_cases():
    scores = bws_scores(BY_HAND)
    two = bws_rank_correlation({"a": 1.0, "b": 2.0}, scores)
    assert two.spearman.n == 2 and math.isnan(two.spearman.value)
    flat = bws_rank_correlation(dict.fromkeys("abcd", 3.0), scores)
    assert flat.kendall.n == 4 and math.isnan(flat.kendall.value)
    four = bws_rank_correlation({"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0}, scores)
    assert four.spearman.value == pytest.approx(1.0)
    assert (four.spearman.ci_low, four.spearman.ci_high) == (1.0, 1.0)  # every resample: 1
    fisher = four.spearman_fisher
    assert (fisher.ci_low, fisher.ci_high) == (1.0, 1.0)  # Fisher at |r| = 1
    assert math.isnan(four.kendall.ci_low)  # tau's interval needs 5 texts


def test_rank_intervals_hold_their_estimate_and_narrow():
    rng = np.random.default_rng(4)
    small, large = rng.normal(size=(2, 12)), rng.normal(size=(2, 400))
    small[1] += small[0]
    large[1] += large[0]
    for compute in (spearman_with_ci, kendall_with_ci):
        a, b = compute(*small), compute(*large)
        for e in (a, b):
            assert e.ci_low <= e.value <= e.ci_high
        assert b.ci_high - b.ci_low < a.ci_high - a.ci_low
