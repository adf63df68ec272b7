"""The misleading cue's rating PR (methods §5): mode or maximum against half the scale."""

import pytest

from apps.judging.misleading_cue import cue_anchor, misleading_rating


@pytest.mark.parametrize(
    ("ratings", "lo", "hi", "pr"),
    [
        ((2, 2, 5), 1, 5, 5),  # mode 2 <= 5/2 -> hi
        ((4, 4, 1), 1, 5, 1),  # mode 4 > 5/2 -> lo
        ((1, 3, 5), 0, 10, 10),  # all differ, max 5 <= 10/2 (boundary) -> hi
        ((1, 2, 3), 1, 5, 1),  # all differ, max 3 > 5/2 -> lo
        ((2, 2, 3), 1, 3, 1),  # 1-3 scale: threshold hi/2 = 1.5, so the middle 2 is "high"
        ((0, 0, 1), 0, 1, 1),  # USR-style 0-1 scale
    ],
)
def test_misleading_rating_branches(ratings, lo, hi, pr):
    assert misleading_rating(*ratings, lo, hi) == pr


def test_cue_anchor_mode_or_max():
    assert cue_anchor(3, 1, 3) == 3
    assert cue_anchor(1, 4, 2) == 4


def test_misleading_rating_validates_scale():
    with pytest.raises(ValueError, match="scale"):
        misleading_rating(1, 2, 6, 1, 5)
    with pytest.raises(ValueError, match="lo < hi"):
        misleading_rating(1, 1, 1, 5, 1)
