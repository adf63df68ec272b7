"""Control items: mixed into each annotator's queue at the study's rate, unannounced, never
served twice, never data; accuracy per annotator; the threshold flags or leaves out."""

from __future__ import annotations

import uuid

import pytest

from apps.analysis.controls import control_accuracy, excluded_people
from apps.analysis.raw_data.human import history_rows, judgement_rows
from apps.analysis.reports import human_agreement
from apps.analysis.services import report_get
from apps.annotation.models import (
    Assessment,
    Comparison,
    ControlItem,
    ControlServe,
    Study,
    StudyPerturbation,
    Vetting,
    original_shown_first,
    unit_of,
)
from apps.annotation.selectors.work_counts import done_by, queue
from apps.annotation.services import ASSESSMENT, COMPARISON, VETTING
from apps.annotation.services.controls import control_add, control_due, hand_out, put_back
from tests.annotation.factories import study_setup
from tests.factories import KindFactory, PerturbationFactory, SourceItemFactory

pytestmark = pytest.mark.django_db


def gold(study: Study, n: int, prefix: str = "gold") -> list:
    """`n` perturbations in the study's dataset, of a kind the study does not vet: outside
    its plan, so usable as control items only."""
    kind = KindFactory(
        slug=f"{prefix}-kind",
        name="Kind g",
        description="Negates one statement.",
        quality_issue="Quality issue g.",
    )
    dataset = study.datasets.get()
    return [
        PerturbationFactory(
            item=SourceItemFactory(dataset=dataset, source="The council met on Tuesday."),
            kind=kind,
            explanation="Added 'not'.",
        )
        for _ in range(n)
    ]


def vetting_controls(study: Study, n: int, verdict: str = "invalid") -> list[ControlItem]:
    return [
        control_add(study=study, work="vetting", perturbation=p.pk, answer=verdict)
        for p in gold(study, n)
    ]


def vet(study, person, unit, verdict="valid"):
    return VETTING.submit(
        study=study,
        person=person,
        unit=unit,
        answer={"verdict": verdict, "note": ""},
        idempotency_key=uuid.uuid4(),
    )


def work_queue(study, person, answer=lambda served: "valid"):
    """Work the whole vetting queue: [(position, is control)] in the order handed out."""
    seen = []
    while (slot := hand_out(VETTING, study=study, person=person)) is not None:
        control = isinstance(slot, ControlServe)
        seen.append(control)
        vet(study, person, unit_of(slot, ("perturbation",)), answer(slot) if control else "valid")
        assert len(seen) < 500
    return seen


def test_one_control_in_each_block_at_a_seeded_place():
    due = [n for n in range(100) if control_due("7:vetting:3", n, 10)]
    assert len(due) == 10
    assert [n // 10 for n in due] == list(range(10))  # one per block of ten
    assert due == [n for n in range(100) if control_due("7:vetting:3", n, 10)]  # same seed
    other = [n for n in range(100) if control_due("7:vetting:4", n, 10)]
    assert other != due  # another annotator: other places
    assert not any(control_due("s", n, 0) for n in range(50))  # off


def test_the_rate_holds_over_a_queue_and_controls_are_not_data():
    setup = study_setup(perturbations=100, annotators=1, control_every=10)
    study, ann = setup.study, setup.annotators[0]
    vetting_controls(study, 20)
    seen = work_queue(study, ann)
    controls = sum(seen)
    assert 100 + controls == len(seen)
    assert 9 <= controls <= 12  # one in ten units handed out
    # Where they came is the seeded schedule, the same on every run.
    seed = f"{study.pk}:vetting:{ann.pk}"
    assert [n for n, c in enumerate(seen) if c] == [
        n for n in range(len(seen)) if control_due(seed, n, 10)
    ]
    # Never data: the default manager, the progress figures and the reports leave them out.
    assert Vetting.objects.filter(study=study).count() == 100
    assert Vetting.answers.filter(study=study).count() == 100 + controls
    assert done_by(VETTING, study)[ann.pk][0] == 100
    assert len(list(history_rows(study))) == 100  # the raw data's history too
    assert len(list(judgement_rows(study))) == 100
    # ... but the annotator's own count includes them (nothing tells them apart).
    assert queue(VETTING, study=study, person=ann).done == 100 + controls


def test_a_control_is_never_served_twice_to_one_annotator():
    setup = study_setup(perturbations=20, annotators=2, vetting_overlap=2, control_every=2)
    study = setup.study
    controls = vetting_controls(study, 3)
    for ann in setup.annotators:
        seen = work_queue(study, ann)
        assert sum(seen) == 3  # then no control is left for them: real work only
        assert len(seen) == 23
    for control in controls:
        assert ControlServe.objects.filter(control=control).count() == 2  # once each
        assert Vetting.answers.filter(control=control).count() == 2


def test_controls_never_come_alone_and_skipping_drops_them():
    setup = study_setup(perturbations=1, annotators=1, control_every=2)
    study, ann = setup.study, setup.annotators[0]
    vetting_controls(study, 5)
    seen = work_queue(study, ann)
    assert len(seen) - sum(seen) == 1 and sum(seen) <= 1  # the queue ends with the real work
    setup = study_setup(perturbations=4, annotators=1, control_every=2, prefix="t")
    study, ann = setup.study, setup.annotators[0]
    vetting_controls(study, 5)
    while not isinstance(slot := hand_out(VETTING, study=study, person=ann), ControlServe):
        vet(study, ann, unit_of(slot, ("perturbation",)))
    put_back(VETTING, study=study, person=ann, unit=unit_of(slot, ("perturbation",)))
    slot.refresh_from_db()
    assert slot.skipped and slot.answered_at is None
    again = hand_out(VETTING, study=study, person=ann)
    assert not (isinstance(again, ControlServe) and again.pk == slot.pk)


@pytest.mark.postgresql  # SQLite's hand-out order meets the planned unit as real work first
def test_a_planned_unit_met_as_a_control_is_not_handed_out_again_as_real_work():
    setup = study_setup(perturbations=3, annotators=2, control_every=2)
    study = setup.study
    one, other = setup.annotators
    # The last in the work order: met as a control (due at position 0 or 1) before real work
    # reaches it, whatever the seeded place of the control.
    last = StudyPerturbation.objects.filter(study=study).order_by("-position").first()
    planned = last.perturbation
    control_add(study=study, work="vetting", perturbation=planned.pk, answer="valid")
    seen = work_queue(study, one)
    got_control = ControlServe.objects.filter(annotator=one).exists()
    assert got_control
    # One answer on the planned perturbation, as a control: not also as real work.
    assert Vetting.answers.filter(annotator=one, perturbation=planned).count() == 1
    assert not Vetting.objects.filter(annotator=one, perturbation=planned).exists()
    assert len(seen) == 3
    # The other annotator (without control items now) vets it for real.
    Study.objects.filter(pk=study.pk).update(control_every=0)
    study.refresh_from_db()
    work_queue(study, other)
    assert Vetting.objects.filter(perturbation=planned).exists()


def test_a_control_is_shown_like_any_unit(client):
    setup = study_setup(perturbations=30, annotators=1, control_every=2)
    study, ann = setup.study, setup.annotators[0]
    vetting_controls(study, 10)
    client.force_login(ann)
    pages: dict[str, tuple[int, str]] = {}
    for _ in range(10):  # a full history first (the page lists the last 8 answers)
        slot = hand_out(VETTING, study=study, person=ann)
        vet(study, ann, {"perturbation_id": slot.perturbation_id})
    while len(pages) < 2:
        slot = hand_out(VETTING, study=study, person=ann)
        kind = "control" if isinstance(slot, ControlServe) else "real"
        page = client.get(f"/studies/{study.pk}/vet/{slot.perturbation_id}/")
        pages.setdefault(kind, (slot.perturbation_id, page.content.decode()))
        vet(study, ann, {"perturbation_id": slot.perturbation_id})
    for pid, html in pages.values():
        assert f'action="/studies/{study.pk}/vet/{pid}/verdict/"' in html
        assert "control" not in html.lower()
    real, control = (pages[k][1] for k in ("real", "control"))
    assert _tags(real) == _tags(control)  # the same page, element for element


def _tags(html: str) -> list[str]:
    """The page's elements and their ids and classes (no text, no unit ids)."""
    import re

    return re.findall(r"<(\w+)(?=[\s>])(?:[^>]*?\s(?:id|class)=\"([^\"]*)\")?", html)


def test_accuracy_per_annotator_with_its_wilson_interval():
    setup = study_setup(perturbations=2, annotators=2, aspects=1, assess=True, control_every=2)
    study = setup.study
    ann, bob = setup.annotators
    criterion = setup.criteria[0]
    golds = gold(study, 3)
    vet_right = control_add(study=study, work="vetting", perturbation=golds[0].pk, answer="invalid")
    vet_wrong = control_add(study=study, work="vetting", perturbation=golds[1].pk, answer="valid")
    study.criteria.add(criterion)
    compared = control_add(
        study=study,
        work="comparison",
        perturbation=golds[2].pk,
        criterion=criterion.key,
        answer="worse",
    )
    rated = control_add(
        study=study,
        work="assessment",
        item=golds[2].item_id,
        criterion=criterion.key,
        answer=4,
        tolerance=1,
    )
    # ann: invalid (right), invalid (wrong), worse (right), 3 for 4±1 (right): 3 of 4.
    answer(VETTING, study, ann, vet_right, {"verdict": "invalid", "note": ""})
    answer(VETTING, study, ann, vet_wrong, {"verdict": "invalid", "note": ""})
    first = original_shown_first(
        study_id=study.pk, perturbation_id=golds[2].pk, criterion_id=criterion.pk, user_id=ann.pk
    )
    answer(COMPARISON, study, ann, compared, {"choice": "A" if first else "B"})  # worse
    answer(ASSESSMENT, study, ann, rated, {"score": 3})
    # bob: 2 for 4±1 (wrong): 0 of 1.
    answer(ASSESSMENT, study, bob, rated, {"score": 2})
    rows = {row.username: row for row in control_accuracy(study)}
    a, b = rows[ann.username], rows[bob.username]
    assert (a.n, a.right, b.n, b.right) == (4, 3, 1, 0)
    assert a.estimate.value == pytest.approx(0.75)
    # Wilson 95% for 3/4 by hand: (0.75 + z²/8 ± z·sqrt(0.75·0.25/4 + z²/64)) / (1 + z²/4).
    assert (a.estimate.ci_low, a.estimate.ci_high) == pytest.approx((0.3006, 0.9544), abs=1e-4)
    assert (b.estimate.ci_low, b.estimate.ci_high) == pytest.approx((0.0, 0.7935), abs=1e-4)
    assert not a.flagged and not b.flagged  # no threshold yet
    # None of it is data.
    assert not Comparison.objects.filter(study=study).exists()
    assert not Assessment.objects.filter(study=study).exists()
    assert Assessment.answers.filter(study=study).count() == 2


def answer(work, study, person, control, values):
    """Serve `control` to `person` and submit their answer through the shared submit."""
    ControlServe.objects.create(
        study=study, control=control, annotator=person, work=work.slug, position=0
    )
    unit = unit_of(control, work.model.unit_fields)
    return work.submit(
        study=study, person=person, unit=unit, answer=values, idempotency_key=uuid.uuid4()
    )


def test_the_threshold_flags_and_excludes_in_what_reports_compute():
    setup = study_setup(perturbations=3, annotators=2, vetting_overlap=2, control_every=2)
    study = setup.study
    good, bad = setup.annotators
    for ann in (good, bad):
        for slot in iter(lambda a=ann: VETTING.next(study=study, person=a), None):
            vet(study, ann, unit_of(slot, ("perturbation",)), "valid" if ann == good else "invalid")
    controls = vetting_controls(study, 2)
    for control in controls:
        answer(VETTING, study, good, control, {"verdict": "invalid", "note": ""})
        answer(VETTING, study, bad, control, {"verdict": "valid", "note": ""})

    def vetting_total() -> tuple[int, int]:
        """From the report as researchers get it (its snapshot, rebuilt when inputs change)."""
        study.refresh_from_db()
        payload = report_get(study=study, name="human-agreement").payload
        table = next(
            t for s in payload["sections"] for t in s["tables"] if t["name"] == "vetting_by_kind"
        )
        row = table["rows"][0]
        return row[table["columns"].index("total")], row[table["columns"].index("valid")]

    assert vetting_total() == (6, 3)  # control answers are never counted
    study.control_threshold = 60
    study.save()
    rows = {r.username: r for r in control_accuracy(study)}
    assert rows[bad.username].flagged and not rows[good.username].flagged
    assert not rows[bad.username].excluded and excluded_people(study) == set()
    assert vetting_total() == (6, 3)  # flagged only: still counted
    study.control_exclude = True
    study.save()
    assert excluded_people(study) == {bad.pk}
    assert vetting_total() == (3, 3)  # bad's invalid verdicts are left out
    report = human_agreement.build(study)
    accuracy = next(t for s in report.sections for t in s.tables if t.name == "control_accuracy")
    assert [r[0] for r in accuracy.rows] == sorted([good.username, bad.username])
    assert any(bad.username in note for note in report.notes)


def test_defining_controls_refuses_bad_input_and_saves_nothing():
    setup = study_setup(perturbations=1, annotators=1, aspects=1, assess=True)
    study = setup.study
    outsider = PerturbationFactory()  # another researcher's dataset
    cases = [
        ({"work": "survey", "answer": "x"}, "survey takes no control"),
        ({"work": "vetting", "answer": "valid"}, "perturbation is required"),
        ({"work": "vetting", "perturbation": outsider.pk, "answer": "valid"}, "not in this"),
        ({"work": "vetting", "perturbation": setup.perturbations[0].pk, "answer": "meh"}, "one of"),
        (
            {"work": "comparison", "perturbation": setup.perturbations[0].pk, "answer": "worse"},
            "criterion is required",
        ),
        (
            {
                "work": "assessment",
                "item": setup.perturbations[0].item_id,
                "criterion": setup.criteria[0].key,
                "answer": "9",
            },
            "outside",
        ),
    ]
    for fields, message in cases:
        with pytest.raises(ValueError, match=message):
            control_add(study=study, **fields)
    assert not ControlItem.objects.exists()


@pytest.mark.parametrize("kind", ["compare", "assess"])
def test_comparison_and_rating_queues_mix_controls_in_through_the_pages(client, kind):
    import re

    setup = study_setup(
        perturbations=8,
        annotators=1,
        aspects=1,
        assess=kind == "assess",
        comparisons_need_vetting=False,
        control_every=3,
    )
    study, ann = setup.study, setup.annotators[0]
    criterion = setup.criteria[0].key
    for p in gold(study, 4):
        if kind == "compare":
            control_add(
                study=study,
                work="comparison",
                perturbation=p.pk,
                criterion=criterion,
                answer="same",
            )
        else:
            control_add(
                study=study, work="assessment", item=p.item_id, criterion=criterion, answer=3
            )
    client.force_login(ann)
    submit = "choice" if kind == "compare" else "rating"
    pattern = rf'action="(/studies/{study.pk}/{kind}/[\d/]+/{submit}/)"'
    handed = 0
    while found := re.search(pattern, client.get(f"/studies/{study.pk}/{kind}/").content.decode()):
        data = {"idempotency_key": str(uuid.uuid4())}
        data.update({"choice": "C", "original_first": "1"} if kind == "compare" else {"score": 3})
        assert client.post(found.group(1), data).status_code == 302
        handed += 1
        assert handed < 40
    work = COMPARISON if kind == "compare" else ASSESSMENT
    real = work.model.objects.filter(study=study).count()
    controls = work.model.answers.filter(study=study, control__isnull=False).count()
    assert real == (8 if kind == "compare" else 16)  # assess: originals and perturbed texts
    assert handed == real + controls
    assert controls == ControlServe.objects.filter(annotator=ann).count() >= 2
    rows = control_accuracy(study)
    assert [(r.n, r.right) for r in rows] == [(controls, controls)]  # "same" / 3: all right
