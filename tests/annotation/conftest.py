"""Fixtures of the annotation tests."""

import pytest

from tests.annotation.factories import study_setup


@pytest.fixture
def vetting_study(db):
    """Three perturbations, two annotators, one vetting each, one aspect with one criterion."""
    return study_setup(perturbations=3, annotators=2, aspects=1)


@pytest.fixture
def compare_study(db):
    """Comparisons without vetting: 2 perturbations, 2 annotators in 1 group, 2 aspects."""
    return study_setup(perturbations=2, annotators=2, aspects=2, comparisons_need_vetting=False)
