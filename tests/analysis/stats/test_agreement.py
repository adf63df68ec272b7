import math

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apps.analysis.stats.agreement import (
    AgreementResult,
    alpha_with_ci,
    chance_agreement,
    cohen_kappa,
    cohen_kappa_with_ci,
    correlation_square,
    encode_ratings,
    krippendorff_alpha,
    pairwise_correlations,
    pearson_with_ci,
    percent_agreement,
    percent_agreement_with_ci,
    rating_counts,
)
from apps.analysis.stats.intervals import mean_interval

nan = np.nan

# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", the worked example with
# missing data: 3 raters x 15 units; published alpha: nominal 0.691, interval 0.811.
KRIPPENDORFF_2011 = [
    [nan, nan, nan, nan, nan, 3, 4, 1, 2, 1, 1, 3, 3, nan, 3],
    [1, nan, 2, 1, 3, 3, 4, 3, nan, nan, nan, nan, nan, nan, nan],
    [nan, nan, 2, 1, 3, 4, 4, nan, 2, 1, 1, 3, 3, nan, 4],
]
# Hayes & Krippendorff (2007) ordinal example: 4 raters x 12 units, published alpha 0.815.
HAYES_2007 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
    [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
]
LABELS = ["very low", "low", "mid", "high", "very high"]


def test_alpha_tiny_case_by_hand():
    # Raters x units:  r1 = a a b ; r2 = a b b.
    # Coincidences (each pairable unit adds its ordered pairs / (m_u - 1), m_u = 2):
    #   u1 (a,a): o_aa += 2;  u2 (a,b): o_ab += 1, o_ba += 1;  u3 (b,b): o_bb += 2
    #   o = [[2, 1], [1, 2]], n_a = n_b = 3, n = 6.
    # Nominal: alpha = 1 - (n - 1) * sum_{c!=k} o_ck / sum_{c!=k} n_c n_k
    #               = 1 - 5 * 2 / (3*3 + 3*3) = 1 - 10/18 = 4/9.
    data = [["a", "a", "b"], ["a", "b", "b"]]
    assert krippendorff_alpha(data, "nominal") == pytest.approx(4 / 9)
    # Interval on codes a=1, b=2: D_o = (1 + 1)/6, D_e = (3*3*1 * 2)/(6*5) = 18/30,
    # alpha = 1 - (2/6)/(18/30) = 4/9 too (two categories: every metric agrees).
    assert krippendorff_alpha([[1, 1, 2], [1, 2, 2]], "interval") == pytest.approx(4 / 9)


def test_alpha_matches_published_values_with_missing_data():
    assert krippendorff_alpha(KRIPPENDORFF_2011, "nominal") == pytest.approx(0.691358, abs=1e-6)
    assert krippendorff_alpha(KRIPPENDORFF_2011, "interval") == pytest.approx(0.810845, abs=1e-6)
    assert krippendorff_alpha(HAYES_2007, "ordinal") == pytest.approx(0.815, abs=5e-4)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
@pytest.mark.parametrize("data", [KRIPPENDORFF_2011, HAYES_2007])
def test_alpha_equals_package_on_missing_data(data, level):
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
    assert krippendorff_alpha(data, level) == pytest.approx(expected)


def test_ordinal_labels_use_value_order():
    labels = [
        [LABELS[int(v) - 1] if not math.isnan(v) else None for v in row] for row in HAYES_2007
    ]
    expected = krippendorff.alpha(
        reliability_data=np.array(HAYES_2007), level_of_measurement="ordinal"
    )
    assert krippendorff_alpha(labels, "ordinal", value_order=LABELS) == pytest.approx(expected)
    with pytest.raises(ValueError, match="value_order"):
        krippendorff_alpha(labels, "ordinal")


def test_nominal_labels_match_package_on_string_array():
    labels = [["A", "B", None, "C"], ["A", "B", "D", "C"], ["A", "C", "D", nan]]
    as_strings = np.array([[str(v) if v is not None else "nan" for v in r] for r in labels])
    expected = krippendorff.alpha(reliability_data=as_strings, level_of_measurement="nominal")
    assert krippendorff_alpha(labels, "nominal") == pytest.approx(expected)
    # a numpy string array spells a missing value "nan"; it is missing here too
    assert krippendorff_alpha(as_strings, "nominal") == pytest.approx(expected)


def test_encode_rejects_unknown_label_and_bad_shape():
    with pytest.raises(ValueError, match="not in value_order"):
        encode_ratings([["low", "huge"]], "ordinal", value_order=["low", "high"])
    with pytest.raises(ValueError, match="2-D"):
        encode_ratings([1, 2, 3])


def test_alpha_degenerate_cases_are_nan():
    # one category everywhere: expected disagreement 0 -> alpha 0/0, undefined
    assert math.isnan(krippendorff_alpha([[3, 3, 3], [3, 3, 3]], "ordinal"))
    # only one category among *pairable* units (the lone 5 is in an unpaired unit)
    assert math.isnan(krippendorff_alpha([[3, 3, 5], [3, 3, nan]], "interval"))
    # no unit with two ratings
    assert math.isnan(krippendorff_alpha([[1, nan], [nan, 2]], "nominal"))
    assert math.isnan(krippendorff_alpha([[1, 2, 3]], "nominal"))


def test_percent_agreement_by_hand():
    # unit 1: 3 raters agree -> 3/3 pairs; unit 2: (a,a,b) -> 1 of 3 pairs;
    # unit 3: (a,b) -> 0 of 1; unit 4: single rating, skipped. Mean = (1 + 1/3 + 0)/3 = 4/9.
    data = [["a", "a", "a", "a"], ["a", "a", "b", None], ["a", "b", None, None]]
    assert percent_agreement(data) == pytest.approx(4 / 9)
    assert percent_agreement([[1, 1], [1, 1]]) == 1.0
    assert math.isnan(percent_agreement([[1, nan], [nan, 1]]))


def test_cohen_kappa_by_hand():
    # 10 units rated by both: agree on 7 (4 yes-yes, 3 no-no). Marginals: r1 yes 6/10,
    # r2 yes 5/10. p_o = 0.7, p_e = 0.6*0.5 + 0.4*0.5 = 0.5, kappa = (0.7-0.5)/0.5 = 0.4.
    r1 = ["y"] * 4 + ["y", "y"] + ["n"] * 1 + ["n"] * 3
    r2 = ["y"] * 4 + ["n", "n"] + ["y"] * 1 + ["n"] * 3
    assert cohen_kappa([[*r1, "y"], [*r2, None]]) == pytest.approx(0.4)  # last unit dropped


def test_cohen_kappa_edge_cases():
    assert math.isnan(cohen_kappa([["y", "y"], ["y", "y"]]))  # chance agreement is 1
    assert math.isnan(cohen_kappa([["y", None], [None, "n"]]))  # no unit rated by both
    with pytest.raises(ValueError, match="two raters"):
        cohen_kappa([["y"], ["y"], ["n"]])


def test_alpha_with_ci_reports_n_and_interval():
    result = alpha_with_ci(KRIPPENDORFF_2011, "nominal", n_resamples=200, seed=3)
    assert isinstance(result, AgreementResult)
    assert result.value == pytest.approx(0.691358, abs=1e-6)
    assert result.n_units == 12  # units 1, 2 and 14 have fewer than two ratings
    assert result.n_raters == 3
    assert result.ci_low <= result.value <= result.ci_high


ratings = st.lists(
    st.lists(st.one_of(st.none(), st.integers(1, 5)), min_size=6, max_size=6),
    min_size=2,
    max_size=4,
)


@settings(max_examples=60, deadline=None, database=None)
@given(ratings, st.sampled_from(["nominal", "ordinal", "interval"]))
def test_alpha_is_bounded_or_nan(data, level):
    value = krippendorff_alpha([[nan if v is None else v for v in row] for row in data], level)
    assert math.isnan(value) or -1.0 - 1e-9 <= value <= 1.0 + 1e-9


@settings(max_examples=60, deadline=None, database=None)
@given(ratings)
def test_alpha_equals_package_whenever_defined(data):
    matrix = np.array([[nan if v is None else v for v in row] for row in data], dtype=float)
    value = krippendorff_alpha(matrix, "ordinal")
    if not math.isnan(value):
        expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal")
        assert value == pytest.approx(expected)


def test_percent_agreement_interval_is_the_bootstrap_of_unit_shares():
    # unit shares 1, 1/3, 0 (as above): the interval is scipy's percentile bootstrap of their
    # mean, N counts the pairable units, and the point value is the plain figure.
    data = [["a", "a", "a", "a"], ["a", "a", "b", None], ["a", "b", None, None]]
    found = percent_agreement_with_ci(data)
    assert found.value == pytest.approx(4 / 9) and found.n == 3
    expected = mean_interval([1.0, 1 / 3, 0.0])
    assert (found.ci_low, found.ci_high) == pytest.approx((expected.ci_low, expected.ci_high))
    assert 0.0 <= found.ci_low < 4 / 9 < found.ci_high <= 1.0
    assert percent_agreement_with_ci([[1, 1, 2], [1, 1, 2]]).ci_low == 1.0  # all agree
    assert math.isnan(percent_agreement_with_ci([[1, nan], [nan, 1]]).value)


def test_cohen_kappa_interval_brackets_the_value_and_counts_shared_units():
    r1 = ["y"] * 4 + ["y", "y"] + ["n"] * 1 + ["n"] * 3 + ["y"]
    r2 = ["y"] * 4 + ["n", "n"] + ["y"] * 1 + ["n"] * 3 + [None]
    found = cohen_kappa_with_ci([r1, r2], n_resamples=500)
    assert found.value == pytest.approx(0.4) and found.n == 10  # the 11th unit has one rating
    assert -1.0 <= found.ci_low < 0.4 < found.ci_high <= 1.0
    assert cohen_kappa_with_ci([r1, r2], n_resamples=500) == found  # seeded: same every build
    one_category = cohen_kappa_with_ci([["y", "y"], ["y", "y"]])
    assert math.isnan(one_category.value) and math.isnan(one_category.ci_low)


def test_pearson_with_a_fisher_interval_by_hand():
    """x = 1 2 3 4 5, y = 2 1 4 3 5: r = 0.8 (sum of products of deviations 8, of squares
    10 and 10). Fisher: atanh(0.8) = 1.09861, se = 1 / sqrt(5 - 3) = 0.70711,
    tanh(1.09861 ± 1.95996 x 0.70711) = [-0.27964, 0.98620]; N = 5."""
    r = pearson_with_ci([1, 2, 3, 4, 5, nan], [2, 1, 4, 3, 5, 1])  # the NaN pair is dropped
    assert (r.value, r.n) == (pytest.approx(0.8), 5)
    assert (r.ci_low, r.ci_high) == (
        pytest.approx(-0.27964, abs=1e-5),
        pytest.approx(0.98620, abs=1e-5),
    )
    assert math.isnan(pearson_with_ci([1, 2], [1, 2]).value)  # below three pairs
    three = pearson_with_ci([1, 2, 3], [1, 3, 2])  # a value, but no interval below four
    assert three.value == pytest.approx(0.5) and math.isnan(three.ci_low)
    assert math.isnan(pearson_with_ci([1, 2, 3, 4], [2, 2, 2, 2]).value)  # never varies


def test_pairwise_correlations_and_their_square():
    matrix = [[1, 2, nan], [2, 1, 4], [3, 4, 6], [4, 3, nan], [5, 5, 10]]
    pairs = pairwise_correlations(matrix)
    assert set(pairs) == {(0, 1), (0, 2), (1, 2)}
    assert (pairs[(0, 1)].value, pairs[(0, 1)].n) == (pytest.approx(0.8), 5)
    assert (pairs[(0, 2)].value, pairs[(0, 2)].n) == (pytest.approx(1.0), 3)  # 2 3 5 vs 4 6 10
    corr, counts = correlation_square(pairs, matrix)
    assert corr[1, 0] == corr[0, 1] == pytest.approx(0.8) and corr[2, 2] == 1.0
    assert counts.tolist() == [[5, 5, 3], [5, 5, 3], [3, 3, 3]]


def test_rating_counts_say_what_exists_and_why_no_agreement():
    alone = rating_counts([[1, 2, 3, nan]])  # one rater, three texts
    assert (alone.ratings, alone.units, alone.raters, alone.compared) == (3, 3, 1, 0)
    assert alone.why_no_agreement == "one rater"
    apart = rating_counts([[1, nan], [nan, 2]])  # two raters, never the same text
    assert (apart.raters, apart.compared) == (2, 0)
    assert apart.why_no_agreement == "no text rated twice"
    labels = rating_counts(np.array([["valid", None], ["invalid", "valid"]], dtype=object))
    assert (labels.ratings, labels.compared, labels.why_no_agreement) == (3, 1, "")
    assert rating_counts([]).why_no_agreement == "no ratings yet"


def test_chance_agreement_by_hand():
    # 97% ones each: 0.97^2 + 0.03^2 = 0.9418, what two raters who ignore the texts reach
    first = [1.0] * 97 + [0.0] * 3
    assert chance_agreement(first, first[::-1]) == pytest.approx(0.9418)
