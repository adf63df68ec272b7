"""Building a study's plan: work order, vetting slots, criteria design, comparison slots."""

import pytest

from apps.annotation.models import (
    ComparisonSlot,
    CriterionAssignment,
    StudyPerturbation,
    VettingSlot,
)
from apps.annotation.services import study_plan_build, study_plan_request
from tests.annotation.factories import study_setup
from tests.annotation.work_calls import vetting_next
from tests.factories import MembershipFactory, PerturbationFactory, SourceItemFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_plan_has_every_perturbation_once_with_k_slots():
    setup = study_setup(perturbations=5, kinds=2, vetting_overlap=3, aspects=2)
    plan = StudyPerturbation.objects.filter(study=setup.study)
    assert sorted(plan.values_list("perturbation_id", flat=True)) == sorted(
        p.pk for p in setup.perturbations
    )
    assert sorted(plan.values_list("position", flat=True)) == list(range(1, 11))
    assert VettingSlot.objects.filter(study=setup.study).count() == 30
    assert set(VettingSlot.objects.filter(study=setup.study).values_list("slot", flat=True)) == {
        0,
        1,
        2,
    }
    assert ComparisonSlot.objects.filter(study=setup.study).count() == 0  # nothing vetted yet


def test_rebuilding_changes_nothing_and_keeps_positions():
    setup = study_setup(perturbations=4, vetting_overlap=2, aspects=1)
    before = list(StudyPerturbation.objects.values_list("perturbation_id", "position"))
    summary = study_plan_build(study=setup.study)
    assert list(StudyPerturbation.objects.values_list("perturbation_id", "position")) == before
    assert summary.vetting_slots == 8 and summary.perturbations == 4


def test_new_perturbations_join_at_the_end():
    setup = study_setup(perturbations=2)
    item = SourceItemFactory(dataset=setup.study.datasets.get())
    late = PerturbationFactory(item=item, kind=setup.kinds[0])
    study_plan_build(study=setup.study)
    assert StudyPerturbation.objects.get(perturbation=late).position == 3
    assert VettingSlot.objects.filter(perturbation=late).count() == 1


def test_overlap_up_and_down_keeps_held_and_done_slots():
    setup = study_setup(perturbations=2, vetting_overlap=3, annotators=2)
    held = vetting_next(study=setup.study, annotator=setup.annotators[0])
    other = vetting_next(study=setup.study, annotator=setup.annotators[1])
    assert held.perturbation_id == other.perturbation_id  # depth first: finish items first
    assert {held.slot, other.slot} == {0, 1}
    setup.study.vetting_overlap = 1
    setup.study.save()
    study_plan_build(study=setup.study)
    slots = VettingSlot.objects.filter(study=setup.study)
    assert slots.count() == 3  # the held slot 1 stays, open slots >= 1 go
    setup.study.vetting_overlap = 2
    setup.study.save()
    study_plan_build(study=setup.study)
    assert slots.count() == 4


def test_perturbations_of_removed_kinds_leave_the_plan():
    setup = study_setup(perturbations=2, kinds=2)
    setup.study.kinds.remove(setup.kinds[1])
    study_plan_build(study=setup.study)
    assert StudyPerturbation.objects.filter(study=setup.study).count() == 2
    assert VettingSlot.objects.filter(study=setup.study).count() == 2


def test_criteria_design_is_persisted_per_group():
    setup = study_setup(
        perturbations=1, annotators=4, aspects=3, types_per_aspect=2, comparison_groups=2
    )
    rows = CriterionAssignment.objects.filter(study=setup.study)
    assert rows.count() == 12  # 6 criteria, each once in each of 2 groups
    for group in (0, 1):
        assert rows.filter(group=group).values("criterion").distinct().count() == 6
    for annotator in setup.annotators:
        mine = rows.filter(annotator=annotator)
        assert mine.count() == 3
        assert mine.values("criterion__aspect").distinct().count() == 3


def test_impossible_design_is_reported_and_the_old_one_kept():
    setup = study_setup(perturbations=1, annotators=2, aspects=1, types_per_aspect=2)
    assert CriterionAssignment.objects.filter(study=setup.study).count() == 2
    setup.study.comparison_groups = 2  # one annotator per group cannot take both descriptions
    setup.study.save()
    summary = study_plan_build(study=setup.study)
    assert "only 1 annotators" in summary.problem
    setup.study.refresh_from_db()
    assert setup.study.plan_problem == summary.problem
    assert CriterionAssignment.objects.filter(study=setup.study).count() == 2


def test_comparison_slots_without_vetting_follow_the_design():
    setup = study_setup(
        perturbations=3, annotators=2, aspects=2, types_per_aspect=2, comparisons_need_vetting=False
    )
    slots = ComparisonSlot.objects.filter(study=setup.study)
    assert slots.count() == 3 * 4  # 3 pairs x 4 criteria x 1 group
    for annotator in setup.annotators:
        assert slots.filter(annotator=annotator).count() == 6
    late = UserFactory(username="late")
    MembershipFactory(study=setup.study, user=late, role="annotator")
    setup.study.comparison_groups = 1
    study_plan_build(study=setup.study)
    assert slots.count() == 12
    assert slots.values("annotator").distinct().count() == 3  # re-dealt over three annotators


def test_large_plans_are_handed_to_the_worker(monkeypatch, django_capture_on_commit_callbacks):
    from workers.tasks.annotation import build_study_plan

    setup = study_setup(perturbations=3, build=False)
    monkeypatch.setattr("apps.annotation.services.plan.PLAN_INLINE_LIMIT", 2)
    sent = []
    monkeypatch.setattr(build_study_plan, "delay", sent.append)
    with django_capture_on_commit_callbacks(execute=True):
        assert study_plan_request(study=setup.study) is None
    assert sent == [setup.study.pk]
    setup.study.refresh_from_db()
    assert setup.study.plan_queued_at is not None and setup.study.plan_built_at is None
    build_study_plan(setup.study.pk)  # what the worker runs
    setup.study.refresh_from_db()
    assert setup.study.plan_queued_at is None and setup.study.plan_built_at is not None
    assert VettingSlot.objects.filter(study=setup.study).count() == 3
    build_study_plan(10**9)  # a study deleted meanwhile: nothing to do


def test_small_plans_are_built_at_once():
    setup = study_setup(perturbations=2, build=False)
    summary = study_plan_request(study=setup.study)
    assert summary is not None and summary.vetting_slots == 2
