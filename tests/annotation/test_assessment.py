"""Direct assessment on the shared base: the plan's texts x criteria, k ratings each, leases,
skip, the criterion's scale, submits saved once, history, and the stale-tab check."""

import uuid

import pytest

from apps.annotation.kinds import annotator_progress
from apps.annotation.models import (
    Assessment,
    AssessmentSlot,
    AssessmentUnit,
    JudgementChange,
)
from apps.annotation.services import (
    ASSESSMENT,
    KeyReused,
    StaleJudgement,
    WorkRefused,
    study_plan_build,
)
from tests.annotation.factories import study_setup
from tests.annotation.work_calls import assessment_submit

pytestmark = pytest.mark.django_db


def rate(setup, annotator, slot, score=3, key=None, based_on=None):
    return assessment_submit(
        study=setup.study,
        annotator=annotator,
        unit_id=slot.unit_id,
        score=score,
        idempotency_key=key or uuid.uuid4(),
        based_on=based_on,
    )


def test_the_plan_rates_each_text_under_each_criterion_k_times():
    setup = study_setup(perturbations=2, annotators=2, aspects=2, assess=True)
    units = AssessmentUnit.objects.filter(study=setup.study)
    # 2 items: their 2 originals and 2 perturbed texts, under 2 criteria
    assert units.count() == 8
    assert units.filter(perturbation__isnull=True).count() == 4
    assert AssessmentSlot.objects.filter(study=setup.study).count() == 8
    setup.study.assessment_overlap = 3
    setup.study.assessment_texts = "originals"
    setup.study.save()
    summary = study_plan_build(study=setup.study)
    assert summary.slots["assessment"] == 12  # 4 original texts x criteria, 3 ratings each
    assert units.filter(active=True, perturbation__isnull=False).count() == 0


def test_a_study_without_criteria_to_rate_has_no_such_work():
    setup = study_setup(perturbations=2, annotators=1, aspects=1)
    assert not AssessmentUnit.objects.exists()
    assert not ASSESSMENT.setup.opted_in(setup.study)
    assert ASSESSMENT.next(study=setup.study, person=setup.annotators[0]) is None


def test_each_text_gets_exactly_k_ratings_depth_first():
    setup = study_setup(perturbations=1, annotators=3, aspects=1, assess=True, assessment_overlap=2)
    a, b, c = setup.annotators
    sa = ASSESSMENT.next(study=setup.study, person=a)
    sb = ASSESSMENT.next(study=setup.study, person=b)
    sc = ASSESSMENT.next(study=setup.study, person=c)
    assert sa.unit_id == sb.unit_id != sc.unit_id  # the k annotators of a unit first
    for person, slot in ((a, sa), (b, sb), (c, sc)):
        rate(setup, person, slot)
    while (slot := ASSESSMENT.next(study=setup.study, person=a)) is not None:
        rate(setup, a, slot)
    per_unit = {u.pk: u.assessments.count() for u in AssessmentUnit.objects.all()}
    assert max(per_unit.values()) <= 2
    assert Assessment.objects.filter(annotator=a).values("unit").distinct().count() == 2


def test_a_score_off_the_criterions_scale_saves_nothing():
    setup = study_setup(perturbations=1, annotators=1, aspects=1, assess=True)
    ann = setup.annotators[0]
    slot = ASSESSMENT.next(study=setup.study, person=ann)
    with pytest.raises(ValueError, match="outside this criterion's scale, 1 to 5"):
        rate(setup, ann, slot, score=6)
    assert not Assessment.objects.exists() and not JudgementChange.objects.exists()
    saved = rate(setup, ann, slot, score=5)
    assert (saved.judgement.score, saved.judgement.scale_min, saved.judgement.scale_max) == (
        5,
        1,
        5,
    )


def test_repeats_save_once_changes_keep_history_and_stale_tabs_are_refused():
    setup = study_setup(perturbations=1, annotators=1, aspects=1, assess=True)
    ann = setup.annotators[0]
    slot = ASSESSMENT.next(study=setup.study, person=ann)
    key = uuid.uuid4()
    first = rate(setup, ann, slot, score=2, key=key, based_on=0)
    again = rate(setup, ann, slot, score=2, key=key, based_on=0)
    assert first.new and not again.new and again.judgement.pk == first.judgement.pk
    with pytest.raises(KeyReused):
        rate(setup, ann, slot, score=4, key=key)
    with pytest.raises(StaleJudgement, match="Your rating on this item was changed"):
        rate(setup, ann, slot, score=4, based_on=0)  # a tab opened before the first save
    version = first.judgement.changes.get().pk
    changed = rate(setup, ann, slot, score=4, based_on=version)
    assert changed.judgement.score == 4
    assert [c.after["score"] for c in changed.judgement.changes.order_by("id")] == [2, 4]
    assert changed.judgement.changes.order_by("id").last().before == {"score": 2}


def test_skip_gives_the_text_to_others_and_back_last():
    setup = study_setup(perturbations=1, annotators=2, aspects=1, assess=True)
    a, b = setup.annotators
    first = ASSESSMENT.next(study=setup.study, person=a)
    ASSESSMENT.skip(study=setup.study, person=a, unit={"unit_id": first.unit_id})
    assert ASSESSMENT.next(study=setup.study, person=b).unit_id == first.unit_id
    second = ASSESSMENT.next(study=setup.study, person=a)
    assert second.unit_id != first.unit_id


def test_only_texts_handed_to_you_can_be_rated():
    setup = study_setup(perturbations=1, annotators=2, aspects=1, assess=True)
    a, b = setup.annotators
    slot = ASSESSMENT.next(study=setup.study, person=a)
    with pytest.raises(WorkRefused):
        rate(setup, b, slot)
    assert not Assessment.objects.exists()


def test_progress_counts_ratings():
    setup = study_setup(perturbations=1, annotators=1, aspects=1, assess=True)
    ann = setup.annotators[0]
    rate(setup, ann, ASSESSMENT.next(study=setup.study, person=ann))
    queue = annotator_progress(setup.study, ann, fresh=True)["assessment"]
    assert (queue.done, queue.open, queue.total) == (1, 1, 2)
