import math

import numpy as np
import pytest

from apps.analysis.stats.agreement import pairwise_correlations, pearson_with_ci
from apps.analysis.stats.comparisons import AFFECTED, NOT_AFFECTED
from apps.analysis.stats.deltas import (
    aspect_confusion,
    aspect_correlation_matrix,
    classify_cell,
    classify_cells,
    mean_off_diagonal,
    score_delta,
    split_deltas,
)

nan = np.nan


def test_score_delta_is_mean_paired_difference():
    # differences 1, 0, 2 -> 1.0; the pair with a missing perturbed score is dropped
    assert score_delta([4, 5, 3, 2], [3, 5, 1, nan]) == pytest.approx(1.0)
    assert math.isnan(score_delta([nan], [1]))
    with pytest.raises(ValueError, match="paired"):
        score_delta([1, 2], [1])


@pytest.mark.parametrize(
    ("expected", "human", "cell_class"),
    [
        (AFFECTED, AFFECTED, "S_T"),
        (NOT_AFFECTED, NOT_AFFECTED, "S_F"),
        (AFFECTED, NOT_AFFECTED, "neither"),
        (NOT_AFFECTED, AFFECTED, "neither"),
        (AFFECTED, None, "neither"),
        (NOT_AFFECTED, None, "neither"),
    ],
)
def test_classify_cell(expected, human, cell_class):
    assert classify_cell(expected, human) == cell_class


def test_classify_cells_and_split_deltas():
    expected = {
        ("typo", "Fluency"): AFFECTED,
        ("typo", "Coherence"): NOT_AFFECTED,
        ("typo", "Overall"): AFFECTED,
        ("typo", "Simplicity"): NOT_AFFECTED,
    }
    human = {
        ("typo", "Fluency"): AFFECTED,
        ("typo", "Coherence"): NOT_AFFECTED,
        ("typo", "Overall"): NOT_AFFECTED,
    }  # Simplicity has no human verdict
    classes = classify_cells(expected, human)
    assert classes == {
        ("typo", "Fluency"): "S_T",
        ("typo", "Coherence"): "S_F",
        ("typo", "Overall"): "neither",
        ("typo", "Simplicity"): "neither",
    }
    deltas = {
        ("typo", "Fluency"): 1.2,
        ("typo", "Coherence"): 0.1,
        ("typo", "Overall"): 0.9,
        ("typo", "Simplicity"): nan,
    }
    assert split_deltas(deltas, classes) == ([1.2], [0.1])


def test_aspect_correlation_matrix_by_hand():
    scores = [
        [1, 2, 3, 4],
        [2, 4, 2, 4],
        [3, 6, 1, 4],
        [nan, 1, 5, 4],  # aspect 0 missing: this text only enters pairs without aspect 0
    ]
    matrix = aspect_correlation_matrix(scores)
    assert matrix[0, 1] == pytest.approx(1.0)  # y = 2x on the three complete texts
    assert matrix[0, 2] == pytest.approx(-1.0)
    # aspects 1 and 2 over all four texts: (2,3),(4,2),(6,1),(1,5) -> computed by hand:
    # means 3.25 / 2.75; dx = -1.25 .75 2.75 -2.25; dy = .25 -.75 -1.75 2.25
    # sum dxdy = -.3125 - .5625 - 4.8125 - 5.0625 = -10.75, sum dx^2 = 14.75, sum dy^2 = 8.75
    assert matrix[1, 2] == pytest.approx(-10.75 / math.sqrt(14.75 * 8.75))
    assert np.isnan(matrix[:, 3]).all()  # constant aspect: correlation undefined
    np.testing.assert_allclose(np.diag(matrix)[:3], 1.0)
    np.testing.assert_allclose(matrix, matrix.T, equal_nan=True)


def test_aspect_correlation_matches_numpy_on_complete_data():
    rng = np.random.default_rng(3)
    scores = rng.normal(size=(40, 5))
    np.testing.assert_allclose(aspect_correlation_matrix(scores), np.corrcoef(scores.T))
    with pytest.raises(ValueError):
        aspect_correlation_matrix([1, 2, 3])


def test_aspect_confusion_is_judge_minus_human_off_diagonal_r_with_an_interval():
    # the judge scores two aspects in lockstep (r = 1); people rate them independently (r = 0)
    judge = [[1, 1], [2, 2], [3, 3], [4, 4], [5, 5]]
    human = [[1, 1], [1, -1], [-1, 1], [-1, -1]]
    estimate = aspect_confusion(judge, human)
    assert estimate.value == pytest.approx(1.0) and estimate.n == 5
    assert estimate.ci_low <= 1.0 <= estimate.ci_high
    assert mean_off_diagonal([[1, 0.2, 0.4], [0.2, 1, 0.6], [0.4, 0.6, 1]]) == pytest.approx(0.4)
    alone = aspect_confusion([[1, 1]], human)  # one text: no correlation, no interval
    assert math.isnan(alone.value) and math.isnan(alone.ci_low)


def test_pearson_has_its_fisher_interval_by_hand():
    # r = 0.8 over 5 pairs (the NaN pair drops): z = atanh(0.8) = 1.0986, se = 1/sqrt(2)
    found = pearson_with_ci([1, 2, 3, 4, 5, nan], [2, 1, 4, 3, 5, 1])
    half = 1.959963984540054 / math.sqrt(2)
    assert (found.value, found.n) == (pytest.approx(0.8), 5)
    assert found.ci_low == pytest.approx(math.tanh(math.atanh(0.8) - half))
    assert found.ci_high == pytest.approx(math.tanh(math.atanh(0.8) + half))
    assert (round(found.ci_low, 4), round(found.ci_high, 4)) == (-0.2796, 0.9862)
    three = pearson_with_ci([1, 2, 3], [1, 3, 2])  # r = 0.5, no interval below 4 pairs
    assert three.value == pytest.approx(0.5) and math.isnan(three.ci_low) and three.n == 3
    exact = pearson_with_ci([1, 2, 3, 4], [8, 6, 4, 2])
    assert (exact.value, exact.ci_low, exact.ci_high) == (-1.0, -1.0, -1.0)
    assert math.isnan(pearson_with_ci([1, 1, 1, 1], [1, 2, 3, 4]).value)


def test_correlations_pair_every_two_columns():
    scores = [[1, 2, 5], [2, 1, nan], [3, 4, 3], [4, 3, 2], [5, 5, 1]]
    found = pairwise_correlations(scores)
    assert list(found) == [(0, 1), (0, 2), (1, 2)]
    assert (found[(0, 1)].value, found[(0, 1)].n) == (pytest.approx(0.8), 5)
    # the third aspect is 6 minus the first on the 4 texts scored on both: r = -1 exactly
    assert (found[(0, 2)].n, found[(0, 2)].value, found[(0, 2)].ci_high) == (4, -1.0, -1.0)
