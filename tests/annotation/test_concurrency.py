"""Many annotators at once, on PostgreSQL, each thread with its own database connection."""

import threading
import uuid

import pytest
from django.db import connection

from apps.annotation.models import JudgementChange, StudyPerturbation, Vetting, VettingSlot
from tests.annotation.factories import study_setup
from tests.annotation.work_calls import vetting_next, vetting_submit

pytestmark = [pytest.mark.postgresql, pytest.mark.django_db(transaction=True)]


def at_once(n, work):
    """Run work(i) in n threads released together; return results, raise the first error."""
    barrier = threading.Barrier(n)
    results: list = [None] * n
    errors: list = []

    def run(i):
        try:
            barrier.wait(timeout=30)
            results[i] = work(i)
        except Exception as exc:  # reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    if errors:
        raise errors[0]
    return results


def test_twenty_annotators_at_once_on_an_item_needing_three():
    assert connection.vendor == "postgresql"
    setup = study_setup(perturbations=1, annotators=20, vetting_overlap=3)
    got = at_once(20, lambda i: vetting_next(study=setup.study, annotator=setup.annotators[i]))
    claimed = [slot for slot in got if slot is not None]
    assert len(claimed) == 3
    assert len({slot.annotator_id for slot in claimed}) == 3
    assert len({slot.slot for slot in claimed}) == 3
    assert VettingSlot.objects.filter(annotator__isnull=False).count() == 3


def test_twenty_annotators_on_many_items_never_overfill_one():
    setup = study_setup(perturbations=4, annotators=20, vetting_overlap=3)
    got = at_once(20, lambda i: vetting_next(study=setup.study, annotator=setup.annotators[i]))
    assert sum(slot is not None for slot in got) == 12
    per_item = {}
    for slot in filter(None, got):
        per_item.setdefault(slot.perturbation_id, set()).add(slot.annotator_id)
    assert all(len(annotators) == 3 for annotators in per_item.values())


def test_one_annotator_in_many_tabs_holds_one_item():
    setup = study_setup(perturbations=5, annotators=1, vetting_overlap=2)
    ann = setup.annotators[0]
    got = at_once(8, lambda i: vetting_next(study=setup.study, annotator=ann))
    assert len({slot.pk for slot in got}) == 1
    assert VettingSlot.objects.filter(annotator=ann).count() == 1


def test_the_same_submit_fired_concurrently_saves_one_judgement():
    setup = study_setup(perturbations=1, annotators=1)
    ann = setup.annotators[0]
    slot = vetting_next(study=setup.study, annotator=ann)
    key = uuid.uuid4()

    def submit(i):
        return vetting_submit(
            study=setup.study,
            annotator=ann,
            perturbation_id=slot.perturbation_id,
            verdict="valid",
            idempotency_key=key,
        )

    results = at_once(6, submit)
    assert sum(r.new for r in results) == 1
    assert Vetting.objects.count() == 1 and JudgementChange.objects.count() == 1


def test_different_keys_from_two_sessions_still_make_one_vetting():
    setup = study_setup(perturbations=1, annotators=1)
    ann = setup.annotators[0]
    slot = vetting_next(study=setup.study, annotator=ann)

    def submit(i):
        return vetting_submit(
            study=setup.study,
            annotator=ann,
            perturbation_id=slot.perturbation_id,
            verdict="valid",
            idempotency_key=uuid.uuid4(),
        )

    at_once(2, submit)
    assert Vetting.objects.count() == 1 and JudgementChange.objects.count() == 2


def test_concurrent_vettings_of_one_item_all_count_in_the_consensus():
    setup = study_setup(perturbations=1, annotators=3, vetting_overlap=3)
    slots = [vetting_next(study=setup.study, annotator=a) for a in setup.annotators]

    def submit(i):
        return vetting_submit(
            study=setup.study,
            annotator=setup.annotators[i],
            perturbation_id=slots[i].perturbation_id,
            verdict="valid",
            idempotency_key=uuid.uuid4(),
        )

    at_once(3, submit)
    row = StudyPerturbation.objects.get()
    assert (row.verdict, row.comparable) == ("valid", True)


def test_the_same_submit_from_two_browser_sessions_at_once_saves_one_judgement():
    """Two sessions of one annotator (two tabs, or a retry racing the original) post the
    same verdict with the same key, twice each, at the same moment."""
    from django.test import Client

    setup = study_setup(perturbations=2, annotators=1)
    ann = setup.annotators[0]
    slot = vetting_next(study=setup.study, annotator=ann)
    sessions = [Client(), Client()]
    for session in sessions:
        session.force_login(ann)
    url = f"/studies/{setup.study.pk}/vet/{slot.perturbation_id}/verdict/"
    data = {"verdict": "valid", "note": "", "idempotency_key": str(uuid.uuid4())}
    codes = at_once(
        4, lambda i: sessions[i % 2].post(url, data, HTTP_HX_REQUEST="true").status_code
    )
    assert codes == [200, 200, 200, 200]
    assert Vetting.objects.count() == 1 and JudgementChange.objects.count() == 1
    assert VettingSlot.objects.filter(annotator=ann, done_at__isnull=False).count() == 1
