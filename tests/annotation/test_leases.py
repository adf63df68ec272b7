"""Handing out vetting work: leases, overlap, skip, expiry."""

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.annotation.models import VettingSlot
from tests.annotation.factories import study_setup
from tests.annotation.work_calls import vetting_next, vetting_skip, vetting_submit

pytestmark = pytest.mark.django_db


def submit(setup, annotator, slot, verdict="valid"):
    import uuid

    return vetting_submit(
        study=setup.study,
        annotator=annotator,
        perturbation_id=slot.perturbation_id,
        verdict=verdict,
        idempotency_key=uuid.uuid4(),
    )


def test_asking_again_returns_the_held_item_with_a_longer_lease():
    setup = study_setup(perturbations=3, annotators=1)
    ann = setup.annotators[0]
    first = vetting_next(study=setup.study, annotator=ann)
    later = timezone.now() + timedelta(minutes=5)
    again = vetting_next(study=setup.study, annotator=ann, now=later)
    assert again.pk == first.pk and again.leased_until > first.leased_until


def test_work_goes_in_order_and_runs_out():
    setup = study_setup(perturbations=3, annotators=1)
    ann = setup.annotators[0]
    seen = []
    while (slot := vetting_next(study=setup.study, annotator=ann)) is not None:
        seen.append(slot.position)
        submit(setup, ann, slot)
    assert seen == [1, 2, 3]


def test_an_item_needing_two_gets_two_distinct_annotators():
    setup = study_setup(perturbations=2, annotators=3, vetting_overlap=2)
    a, b, c = setup.annotators
    sa = vetting_next(study=setup.study, annotator=a)
    sb = vetting_next(study=setup.study, annotator=b)
    sc = vetting_next(study=setup.study, annotator=c)
    assert sa.perturbation_id == sb.perturbation_id != sc.perturbation_id
    submit(setup, a, sa)
    # a never gets the same perturbation again, even with its other slot open
    nxt = vetting_next(study=setup.study, annotator=a)
    assert nxt.perturbation_id == sc.perturbation_id


def test_a_lapsed_lease_is_handed_on_and_the_late_vetting_still_counts():
    setup = study_setup(perturbations=1, annotators=2, lease_minutes=30)
    a, b = setup.annotators
    slot = vetting_next(study=setup.study, annotator=a)
    assert vetting_next(study=setup.study, annotator=b) is None  # held by a
    later = timezone.now() + timedelta(minutes=31)
    stolen = vetting_next(study=setup.study, annotator=b, now=later)
    assert stolen.pk == slot.pk and stolen.lapsed_annotator_id == a.pk
    saved = submit(setup, a, slot)  # a comes back late: kept, never dropped
    assert saved.new and saved.judgement.annotator == a
    submit(setup, b, stolen)
    assert VettingSlot.objects.get(pk=slot.pk).done_at is not None


def test_skip_puts_the_item_back_for_others_and_last_for_me():
    setup = study_setup(perturbations=2, annotators=2)
    a, b = setup.annotators
    first = vetting_next(study=setup.study, annotator=a)
    vetting_skip(study=setup.study, annotator=a, perturbation_id=first.perturbation_id)
    assert vetting_next(study=setup.study, annotator=b).perturbation_id == first.perturbation_id
    second = vetting_next(study=setup.study, annotator=a)
    assert second.perturbation_id != first.perturbation_id
    submit(setup, a, second)
    assert vetting_next(study=setup.study, annotator=a) is None  # b holds the skipped one
    vetting_skip(study=setup.study, annotator=b, perturbation_id=first.perturbation_id)
    back = vetting_next(study=setup.study, annotator=a)  # skipped by a, but all that is left
    assert back.perturbation_id == first.perturbation_id


def test_nothing_for_a_study_without_a_plan():
    setup = study_setup(perturbations=2, annotators=1, build=False)
    assert vetting_next(study=setup.study, annotator=setup.annotators[0]) is None
