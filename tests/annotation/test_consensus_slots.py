"""A text's comparison slots follow its vetting consensus (docs/annotation.md, "Speed").

When a vetting settles (or changes) a text's verdict, its comparison slots are brought in line
with the design: on PostgreSQL by the same statement that stores the verdict, elsewhere by
`comparison_slots_sync`. Both must leave the same slots, through a design that changes and
a verdict that flips back and forth.
"""

from __future__ import annotations

import pytest
from django.utils import timezone

from apps import sql_rows as rows
from apps.annotation.models import ComparisonSlot, CriterionAssignment, StudyPerturbation
from apps.annotation.services.plan import comparable_refresh_one
from tests.annotation.factories import study_setup
from tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db


def _slots(study, perturbation) -> set[tuple]:
    row = StudyPerturbation.objects.get(study=study, perturbation=perturbation)
    return {
        (s.criterion_id, s.group, s.annotator_id, s.position == row.position, s.done_at is not None)
        for s in ComparisonSlot.objects.filter(study=study, perturbation=perturbation)
    }


def test_the_one_statement_sync_leaves_what_the_orm_sync_leaves():
    setup = study_setup(
        perturbations=2, annotators=4, aspects=2, vetting_overlap=3, comparison_groups=2
    )
    study = setup.study
    fast_text, orm_text = setup.perturbations

    def refresh(perturbation, counts):
        """The orm_text through the ORM's path (as on SQLite), the other in one statement."""
        row = StudyPerturbation.objects.get(study=study, perturbation=perturbation)
        with pytest.MonkeyPatch.context() as patch:
            if perturbation == orm_text:
                patch.setattr(rows, "chained", lambda: False)
            return comparable_refresh_one(study=study, row=row, counts=counts, slots=True)

    design = list(CriterionAssignment.objects.filter(study=study))
    assert len(design) == 4  # two groups x two criteria
    for text in (fast_text, orm_text):
        assert _slots(study, text) == set()
        assert refresh(text, {"valid": 3})
        assert refresh(text, {"valid": 3}) is False  # unchanged: nothing to do
    assert _slots(study, fast_text) == _slots(study, orm_text)
    assert len(_slots(study, fast_text)) == 4

    # The design gives one (group, criterion) to a newcomer and drops another; the verdict
    # changes but the text stays comparable: open slots move to the newcomer or go.
    newcomer = UserFactory(username="newcomer", role="annotator")
    MembershipFactory(study=study, user=newcomer, role="annotator")
    dropped, moved = design[1], design[2]
    dropped.delete()
    moved.annotator = newcomer
    moved.save()
    for text in (fast_text, orm_text):
        assert refresh(text, {"score-invariant": 3})
    assert _slots(study, fast_text) == _slots(study, orm_text)
    mine = {(s[0], s[1]) for s in _slots(study, fast_text) if s[2] == newcomer.pk}
    assert mine == {(moved.criterion_id, moved.group)}
    assert len(_slots(study, fast_text)) == 3

    # One slot of each text done; the text is found invalid: open slots go, the done one stays.
    for text in (fast_text, orm_text):
        first = ComparisonSlot.objects.filter(study=study, perturbation=text).order_by("id")[0]
        first.done_at = timezone.now()
        first.save()
        assert refresh(text, {"invalid": 3})
    assert _slots(study, fast_text) == _slots(study, orm_text)
    assert [s[4] for s in _slots(study, fast_text)] == [True]

    # Valid again, and the dropped pair is back in the design: the slots the design wants
    # come back, to its annotators, the done one kept and not doubled.
    CriterionAssignment.objects.create(
        study=study, group=dropped.group, criterion=dropped.criterion, annotator=dropped.annotator
    )
    for text in (fast_text, orm_text):
        assert refresh(text, {"valid": 3})
    assert _slots(study, fast_text) == _slots(study, orm_text)
    assert len(_slots(study, fast_text)) == 4
    owners = {(a.group, a.criterion_id): a.annotator_id for a in CriterionAssignment.objects.all()}
    shown = {(s[1], s[0]): s[2] for s in _slots(study, fast_text)}
    assert shown == owners
