"""Pairwise comparisons: outcome normalisation, queue, skip, saving once."""

import uuid

import pytest

from apps.annotation.models import Comparison, ComparisonSlot, outcome_of, vetting_consensus
from apps.annotation.services import KeyReused, WorkRefused, original_shown_first
from tests.annotation.work_calls import comparison_next, comparison_skip, comparison_submit

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("choice", "original_first", "outcome"),
    [
        ("A", True, "worse"),  # original (first) better: perturbed worse
        ("B", True, "better"),
        ("A", False, "better"),  # perturbed (first) better
        ("B", False, "worse"),
        ("C", True, "same"),
        ("C", False, "same"),
        ("D", True, "uncertain"),
        ("D", False, "uncertain"),
    ],
)
def test_outcome_is_the_perturbed_text_relative_to_the_original(choice, original_first, outcome):
    assert outcome_of(choice, original_first) == outcome


@pytest.mark.parametrize(
    ("counts", "needed", "verdict"),
    [
        ({}, 1, ""),
        ({"valid": 1}, 1, "valid"),
        ({"valid": 1}, 2, ""),
        ({"valid": 2, "invalid": 1}, 3, "valid"),
        ({"valid": 1, "invalid": 1}, 2, ""),
        ({"valid": 1, "invalid": 1, "not-sure": 2}, 3, "not-sure"),
    ],
)
def test_vetting_consensus(counts, needed, verdict):
    assert vetting_consensus(counts, needed) == verdict


def test_the_order_is_a_fixed_fair_coin():
    draws = [
        original_shown_first(study_id=1, perturbation_id=p, criterion_id=c, user_id=7)
        for p in range(40)
        for c in range(10)
    ]
    assert 150 < sum(draws) < 250
    assert original_shown_first(
        study_id=1, perturbation_id=3, criterion_id=2, user_id=7
    ) == original_shown_first(study_id=1, perturbation_id=3, criterion_id=2, user_id=7)


def test_each_annotator_works_through_their_own_share(compare_study):
    a, b = compare_study.annotators
    seen = []
    while (slot := comparison_next(study=compare_study.study, annotator=a)) is not None:
        seen.append((slot.position, slot.criterion_id))
        saved = comparison_submit(
            study=compare_study.study,
            annotator=a,
            perturbation_id=slot.perturbation_id,
            criterion_id=slot.criterion_id,
            choice="A",
            idempotency_key=uuid.uuid4(),
        )
        assert saved.judgement.outcome == ("worse" if saved.judgement.original_first else "better")
    assert seen == sorted(seen) and len(seen) == 2  # 2 pairs x 1 criterion of their own
    assert Comparison.objects.filter(annotator=a).count() == 2
    assert comparison_next(study=compare_study.study, annotator=b) is not None


def test_skip_moves_a_comparison_to_the_end(compare_study):
    a = compare_study.annotators[0]
    first = comparison_next(study=compare_study.study, annotator=a)
    comparison_skip(
        study=compare_study.study,
        annotator=a,
        perturbation_id=first.perturbation_id,
        criterion_id=first.criterion_id,
    )
    second = comparison_next(study=compare_study.study, annotator=a)
    assert second.pk != first.pk


def test_same_key_saves_once_and_a_change_is_kept(compare_study):
    a = compare_study.annotators[0]
    slot = comparison_next(study=compare_study.study, annotator=a)
    args = {
        "study": compare_study.study,
        "annotator": a,
        "perturbation_id": slot.perturbation_id,
        "criterion_id": slot.criterion_id,
        "original_first": True,
    }
    key = uuid.uuid4()
    assert comparison_submit(**args, choice="A", idempotency_key=key).new
    assert not comparison_submit(**args, choice="A", idempotency_key=key).new
    with pytest.raises(KeyReused, match="different answer"):
        comparison_submit(**args, choice="B", idempotency_key=key)
    changed = comparison_submit(**args, choice="C", idempotency_key=uuid.uuid4())
    assert changed.judgement.outcome == "same" and Comparison.objects.count() == 1
    assert changed.judgement.changes.count() == 2
    assert ComparisonSlot.objects.get(pk=slot.pk).done_at is not None


def test_someone_elses_comparison_is_refused(compare_study):
    a, b = compare_study.annotators
    slot = comparison_next(study=compare_study.study, annotator=a)
    with pytest.raises(WorkRefused):
        comparison_submit(
            study=compare_study.study,
            annotator=b,
            perturbation_id=slot.perturbation_id,
            criterion_id=slot.criterion_id,
            choice="A",
            idempotency_key=uuid.uuid4(),
        )
