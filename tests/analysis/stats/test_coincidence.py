"""The coincidence-matrix alpha equals the krippendorff package, at every level."""

import math

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apps.analysis.stats.agreement import alpha_with_ci, krippendorff_alpha
from apps.analysis.stats.coincidence import alpha_bootstrap, alpha_changes_bootstrap


def _package(matrix, level):
    return krippendorff.alpha(reliability_data=matrix, level_of_measurement=level)


ratings = st.lists(
    st.lists(st.one_of(st.none(), st.integers(1, 5)), min_size=6, max_size=6),
    min_size=2,
    max_size=5,
)


@settings(max_examples=150, deadline=None)
@given(ratings, st.sampled_from(["nominal", "ordinal", "interval", "ratio"]))
def test_point_value_equals_the_package(rows, level):
    matrix = np.array([[np.nan if v is None else v for v in row] for row in rows], float)
    ours, _, _ = alpha_bootstrap(matrix, level, n_resamples=2, seed=0)
    expected = krippendorff_alpha(matrix, level)
    assert (math.isnan(ours) and math.isnan(expected)) or ours == pytest.approx(expected)


def test_known_case_with_missing_data():
    # Krippendorff (2011)'s example: nominal alpha 0.743, ordinal... via the package itself
    data = np.array(
        [
            [1, 2, 3, 3, 2, 1, 4, 1, 2, np.nan, np.nan, np.nan],
            [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, np.nan, 3],
            [np.nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, np.nan],
            [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, np.nan],
        ]
    )
    for level in ("nominal", "ordinal", "interval", "ratio"):
        point, low, high = alpha_bootstrap(data, level, n_resamples=300, seed=1)
        assert point == pytest.approx(_package(data, level))
        assert low <= point <= high


def test_interval_narrows_with_more_units_and_is_reproducible():
    rng = np.random.default_rng(3)
    truth = rng.integers(0, 3, 2000)
    noisy = np.where(rng.random((4, 2000)) < 0.8, truth, rng.integers(0, 3, (4, 2000)))
    few = alpha_with_ci(noisy[:, :50], "nominal", n_resamples=500, seed=0)
    many = alpha_with_ci(noisy, "nominal", n_resamples=500, seed=0)
    assert (many.ci_high - many.ci_low) < (few.ci_high - few.ci_low)
    assert alpha_with_ci(noisy, "nominal", n_resamples=500, seed=0) == many
    assert many.n_units == 2000 and many.n_raters == 4


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.lists(st.one_of(st.none(), st.integers(1, 5)), min_size=6, max_size=6),
        min_size=3,
        max_size=5,
    ),
    st.sampled_from(["nominal", "ordinal", "interval"]),
)
def test_the_change_without_a_rater_equals_the_package_difference(rows, level):
    """alpha without rater 0 minus alpha with everyone, from one coincidence table per
    unit (units unpairable without the rater add nothing), equals the package's."""
    matrix = np.array([[np.nan if v is None else v for v in row] for row in rows], float)
    change, low, high = alpha_changes_bootstrap(matrix, level, n_resamples=50, seed=0)[0]
    expected = krippendorff_alpha(matrix[1:], level) - krippendorff_alpha(matrix, level)
    if math.isnan(expected):
        assert math.isnan(change) or math.isnan(krippendorff_alpha(matrix[1:], level))
        return
    assert change == pytest.approx(expected, abs=1e-9)
    if not math.isnan(low):
        assert low <= high


def test_the_change_of_a_hand_case():
    """Raters a = copy = 1 1 1 1 1 2 2 2 2 2 and c = 1 1 1 2 2 2 2 2 1 1 (nominal): alpha
    0.48444 with all three, 1 without c (test_rater_quality works both by hand): change
    +0.51556, and every resample keeps a and copy identical, so the rise stays above 0."""
    a = [1, 1, 1, 1, 1, 2, 2, 2, 2, 2]
    c = [1, 1, 1, 2, 2, 2, 2, 2, 1, 1]
    matrix = np.array([a, a, c], dtype=float)
    change, low, high = alpha_changes_bootstrap(matrix, "nominal", n_resamples=200, seed=0)[2]
    assert change == pytest.approx(1 - (1 - 232 / 450))
    assert 0 < low <= change <= high <= 1
