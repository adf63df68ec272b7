"""Pairwise verdicts as the text the judge preferred, whichever was shown first."""

import pytest

from apps.judging.scoring import preferred_text


@pytest.mark.parametrize(
    ("verdict", "original_first", "preference"),
    [
        ("A", True, "original"),
        ("B", True, "perturbed"),
        ("A", False, "perturbed"),
        ("B", False, "original"),
        ("tie", True, "tie"),
        ("tie", False, "tie"),
    ],
)
def test_the_verdict_names_the_preferred_text(verdict, original_first, preference):
    assert preferred_text(verdict, original_first) == preference


def test_an_unparsed_verdict_or_an_unknown_order_prefers_nothing():
    assert preferred_text(None, True) == ""
    assert preferred_text("A", None) == ""
