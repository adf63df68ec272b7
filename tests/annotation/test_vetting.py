"""Saving vettings: once per submit, history of every change, consensus, edits."""

import uuid

import pytest

from apps.annotation.models import (
    ComparisonSlot,
    JudgementChange,
    StudyPerturbation,
    Vetting,
    VettingSlot,
)
from apps.annotation.services import KeyReused, WorkRefused, perturbation_edit
from tests.annotation.factories import study_setup
from tests.annotation.work_calls import vetting_next, vetting_submit
from tests.factories import PerturbationFactory

pytestmark = pytest.mark.django_db


def vet(setup, annotator, perturbation_id, verdict="valid", key=None, note=""):
    return vetting_submit(
        study=setup.study,
        annotator=annotator,
        perturbation_id=perturbation_id,
        verdict=verdict,
        note=note,
        idempotency_key=key or uuid.uuid4(),
    )


def test_submit_saves_once_per_key(vetting_study):
    ann = vetting_study.annotators[0]
    slot = vetting_next(study=vetting_study.study, annotator=ann)
    key = uuid.uuid4()
    first = vet(vetting_study, ann, slot.perturbation_id, key=key)
    again = vet(vetting_study, ann, slot.perturbation_id, key=key)
    assert first.new and not again.new and again.judgement.pk == first.judgement.pk
    with pytest.raises(KeyReused, match="different answer"):  # the API's 409
        vet(vetting_study, ann, slot.perturbation_id, key=key, verdict="invalid")
    assert Vetting.objects.get().verdict == "valid" and JudgementChange.objects.count() == 1
    assert VettingSlot.objects.get(pk=slot.pk).done_at is not None


def test_changing_a_verdict_keeps_the_history(vetting_study):
    ann = vetting_study.annotators[0]
    slot = vetting_next(study=vetting_study.study, annotator=ann)
    vet(vetting_study, ann, slot.perturbation_id, verdict="valid")
    vet(vetting_study, ann, slot.perturbation_id, verdict="not-sure", note="unsure after all")
    vetting = Vetting.objects.get()
    assert (vetting.verdict, vetting.note) == ("not-sure", "unsure after all")
    changes = list(vetting.changes.order_by("id").values_list("before", "after"))
    assert changes[0][0] is None and changes[0][1]["verdict"] == "valid"
    assert changes[1][0]["verdict"] == "valid" and changes[1][1]["verdict"] == "not-sure"


def test_a_key_of_someone_else_is_refused(vetting_study):
    a, b = vetting_study.annotators
    sa = vetting_next(study=vetting_study.study, annotator=a)
    sb = vetting_next(study=vetting_study.study, annotator=b)
    key = uuid.uuid4()
    vet(vetting_study, a, sa.perturbation_id, key=key)
    with pytest.raises(KeyReused):
        vet(vetting_study, b, sb.perturbation_id, key=key)


def test_unassigned_work_is_refused(vetting_study):
    a, b = vetting_study.annotators
    slot = vetting_next(study=vetting_study.study, annotator=a)
    vetting_next(study=vetting_study.study, annotator=b)
    vetting_next(study=vetting_study.study, annotator=b)  # b holds its own item
    with pytest.raises(WorkRefused):
        vet(vetting_study, b, slot.perturbation_id)  # a holds it, b never did
    outsider = PerturbationFactory()
    with pytest.raises(WorkRefused):
        vet(vetting_study, a, outsider.pk)
    assert Vetting.objects.count() == 0 and JudgementChange.objects.count() == 0


def test_unknown_verdict_is_an_error(vetting_study):
    with pytest.raises(ValueError):
        vet(vetting_study, vetting_study.annotators[0], 1, verdict="maybe")


def test_valid_perturbations_become_comparable(vetting_study):
    ann = vetting_study.annotators[0]
    slot = vetting_next(study=vetting_study.study, annotator=ann)
    vet(vetting_study, ann, slot.perturbation_id, verdict="valid")
    row = StudyPerturbation.objects.get(perturbation_id=slot.perturbation_id)
    assert (row.verdict, row.comparable) == ("valid", True)
    assert ComparisonSlot.objects.filter(perturbation_id=slot.perturbation_id).count() == 1
    vet(vetting_study, ann, slot.perturbation_id, verdict="invalid")  # changed their mind
    row.refresh_from_db()
    assert (row.verdict, row.comparable) == ("invalid", False)
    assert ComparisonSlot.objects.filter(perturbation_id=slot.perturbation_id).count() == 0


def test_consensus_waits_for_every_vetting_and_ties_decide_nothing():
    setup = study_setup(perturbations=1, annotators=3, vetting_overlap=2, aspects=1)
    a, b, _ = setup.annotators
    slot_a = vetting_next(study=setup.study, annotator=a)
    slot_b = vetting_next(study=setup.study, annotator=b)
    vet(setup, a, slot_a.perturbation_id, verdict="valid")
    row = StudyPerturbation.objects.get()
    assert row.verdict == ""  # one of two
    vet(setup, b, slot_b.perturbation_id, verdict="invalid")
    row.refresh_from_db()
    assert (row.verdict, row.comparable) == ("", False)  # a tie
    vet(setup, b, slot_b.perturbation_id, verdict="score-invariant")
    row.refresh_from_db()
    assert row.verdict == ""
    vet(setup, b, slot_b.perturbation_id, verdict="valid")
    row.refresh_from_db()
    assert (row.verdict, row.comparable) == ("valid", True)


def test_edit_is_a_new_version_and_the_vetting_points_at_it(vetting_study):
    ann = vetting_study.annotators[0]
    slot = vetting_next(study=vetting_study.study, annotator=ann)
    perturbation = slot.perturbation
    generated = perturbation.text
    version = perturbation_edit(
        study=vetting_study.study,
        annotator=ann,
        perturbation_id=perturbation.pk,
        text="The council voted never to close the library in March.",
    )
    assert version.number == 2 and version.author == ann
    assert perturbation.versions.get(number=1).text == generated  # the generation is kept
    perturbation.refresh_from_db()
    assert "never" in perturbation.text
    saved = vet(vetting_study, ann, perturbation.pk)
    assert saved.judgement.edited_version == version


def test_only_the_holder_may_edit(vetting_study):
    a, b = vetting_study.annotators
    slot = vetting_next(study=vetting_study.study, annotator=a)
    with pytest.raises(WorkRefused):
        perturbation_edit(
            study=vetting_study.study, annotator=b, perturbation_id=slot.perturbation_id, text="x"
        )
    with pytest.raises(ValueError):
        perturbation_edit(
            study=vetting_study.study, annotator=a, perturbation_id=slot.perturbation_id, text=" "
        )
