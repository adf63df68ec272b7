"""What a perfect judge could show with the texts at hand (docs/cards.md, "The verdict")."""

import math

import pytest

from apps.analysis.stats.power import (
    best_d_summary,
    best_discernment,
    best_p,
    pairs_needed,
    share_reaches,
    share_texts_needed,
)

Z2 = 1.959963984540054**2


def test_a_perfect_rate_on_k_texts_reaches_z2_over_k_plus_z2():
    assert share_reaches(14, 0.0) == pytest.approx(Z2 / (14 + Z2))  # 0.215
    assert share_reaches(14, 1.0) == pytest.approx(14 / (14 + Z2))
    # a failure rate of at most 0.2: z²/(k + z²) <= 0.2 from k = 4 z² = 15.37, so 16 texts
    assert share_texts_needed(0.2, 0.0) == 16
    assert share_reaches(15, 0.0) > 0.2 >= share_reaches(16, 0.0)
    assert share_texts_needed(0.8, 1.0) == 16  # the mirror: a share kept of at least 0.8
    assert share_texts_needed(0.0, 0.0) is None  # no finite sample shows a rate of 0
    assert math.isnan(share_reaches(0, 0.0))


def test_one_pair_gives_at_best_one_half_and_d_grows_with_pairs():
    assert best_p(1) == pytest.approx(0.5)
    assert best_p(5) == pytest.approx(0.5**5)  # the exact test: every pair lowered
    # one text per kind scored on 4 metrics: the demo's D of 0.129 is all a judge can reach
    assert best_discernment(1, 4) == pytest.approx(0.129, abs=5e-4)
    assert best_discernment(4, 4) < 1 <= best_discernment(5, 4)
    assert pairs_needed(4, 1.0) == 5
    assert pairs_needed(1, 1.0) == 5  # 0.5^5 = 0.031 <= 0.05; 0.5^4 = 0.0625 is not
    assert math.isnan(best_discernment(0, 4))


def test_best_summary_takes_the_weakest_kind_and_balances_levels():
    kinds = {"typos": (1, 4), "deletion": (8, 4), "reorder": (8, 4)}
    levels = {"typos": "C", "deletion": "W", "reorder": "S"}
    lowest, mean = best_d_summary(kinds, levels)
    assert lowest == pytest.approx(best_discernment(1, 4))
    assert mean == pytest.approx((best_discernment(1, 4) + 2 * best_discernment(8, 4)) / 3)
