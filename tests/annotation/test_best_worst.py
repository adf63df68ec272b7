"""Best-worst scaling through the plan, the pages and the API: the standard design per item,
roles, the keyboard page, saving once, refusals, a changed plan, set-up."""

import uuid
from collections import Counter

import pytest
from django.urls import reverse
from rest_framework.authtoken.models import Token

from apps.annotation.models import JudgementChange, Study, StudyPerturbation
from apps.annotation.models.best_worst import BestWorst, BestWorstSlot, BestWorstTuple
from apps.annotation.services import study_plan_build
from apps.annotation.services.best_worst import BEST_WORST
from apps.corpus.models import Perturbation
from tests.annotation.factories import study_setup
from tests.factories import (
    CriterionFactory,
    DatasetFactory,
    PerturbationFactory,
    SourceItemFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


def bws_setup(texts: int = 5, annotators: int = 2, **settings):
    """A study whose one item has `texts` texts (its original and `texts - 1` perturbations)
    and another item with two (too few), answered under one criterion."""
    setup = study_setup(perturbations=0, annotators=annotators, experts=1, aspects=1, **settings)
    study, kind = setup.study, setup.kinds[0]
    item = SourceItemFactory(
        dataset=study.datasets.get(), source="The council met on Tuesday.", original="Original."
    )
    for n in range(texts - 1):
        PerturbationFactory(item=item, kind=kind, text=f"Perturbed {n}.")
    PerturbationFactory(item=SourceItemFactory(dataset=study.datasets.get()), kind=kind)
    study.best_worst_criteria.set(setup.criteria)
    study_plan_build(study=study)
    setup.item = item
    return setup


def answer(best=0, worst=1, key=None, based_on=None):
    data = {"best": best, "worst": worst, "idempotency_key": str(key or uuid.uuid4())}
    if based_on is not None:
        data["based_on"] = based_on
    return data


def url(study, tail=""):
    return f"/studies/{study.pk}/{tail}"


def test_the_plan_is_the_standard_design_per_item():
    setup = bws_setup(texts=5)
    study = Study.objects.get(pk=setup.study.pk)
    tuples = list(BestWorstTuple.objects.filter(study=study))
    assert len(tuples) == 10  # 2N tuples of 4 for N = 5 texts
    assert {t.item_id for t in tuples} == {setup.item.pk}  # the other item has 2 texts only
    appearances = Counter(text for t in tuples for text in t.texts)
    assert len(appearances) == 5 and set(appearances.values()) == {8}  # each text 8 times
    assert None in appearances  # the original is one of the texts
    assert all(len(set(t.texts)) == 4 for t in tuples)
    assert BestWorstSlot.objects.filter(study=study).count() == 20  # two answers per tuple
    assert study.plan_problem == ""
    before = [(t.number, t.texts) for t in tuples]
    study_plan_build(study=study)  # built again: the same tuples
    again = BestWorstTuple.objects.filter(study=study).order_by("position")
    assert sorted(before) == sorted((t.number, t.texts) for t in again)


def test_a_small_item_gets_one_tuple_of_all_its_texts():
    setup = bws_setup(texts=3)
    (only,) = BestWorstTuple.objects.filter(study=setup.study)
    assert len(only.texts) == 3 and None in only.texts


@pytest.mark.parametrize(
    ("who", "status"), [("annotator", 200), ("expert", 403), ("owner", 403), ("outsider", 404)]
)
def test_only_the_studys_annotators_answer(client, who, status):
    setup = bws_setup()
    users = {
        "annotator": setup.annotators[0],
        "expert": setup.experts[0],
        "owner": setup.study.owner,
        "outsider": UserFactory(username="outsider", role="annotator"),
    }
    client.force_login(users[who])
    assert client.get(url(setup.study, "best-worst/")).status_code == status
    unit = BestWorstTuple.objects.order_by("position").last()  # handed to nobody
    posted = client.post(url(setup.study, f"best-worst/{unit.pk}/choice/"), answer())
    assert posted.status_code == (status if status != 200 else 403)
    assert not BestWorst.objects.exists()


def test_the_page_shows_the_tuple_and_its_keys(client):
    setup = bws_setup()
    client.force_login(setup.annotators[0])
    body = client.get(url(setup.study, "best-worst/")).text
    slot = BEST_WORST.next(study=setup.study, person=setup.annotators[0])
    unit = BestWorstTuple.objects.get(pk=slot.unit_id)
    assert "The council met on Tuesday." in body  # the source
    assert "How good the summary is" in body  # the criterion, with the task's text name
    for place in range(4):
        key = place + 1
        assert f'name="best" value="{place}" data-key="{key}" data-choose' in body
        assert f'name="worst" value="{place}" data-key="{key}" data-choose' in body
    assert 'data-keyscope data-then="pick-worst"' in body and 'data-key="Enter"' in body
    texts = ["Original." if t is None else Perturbation.objects.get(pk=t).text for t in unit.texts]
    places = [body.index(f'<div class="text scroll pane">{text}</div>') for text in texts]
    assert places == sorted(places)  # in the order recorded
    assert f"/best-worst/{unit.pk}/choice/" in body


def test_submit_saves_once_and_answers_the_next_tuple(client):
    setup = bws_setup()
    ann = setup.annotators[0]
    client.force_login(ann)
    first = BEST_WORST.next(study=setup.study, person=ann)
    target = url(setup.study, f"best-worst/{first.unit_id}/choice/")
    data = answer(best=2, worst=0, based_on=0)
    response = client.post(target, data, **HTMX)
    assert response.status_code == 200
    assert "Saved: best text 3, worst text 1" in response["HX-Trigger"]
    assert response.text.lstrip().startswith('<section id="work"')
    assert client.post(target, data, **HTMX).status_code == 200  # a double click
    assert BestWorst.objects.count() == 1 and JudgementChange.objects.count() == 1
    assert JudgementChange.objects.get().judgement == "best-worst"
    assert client.post(target, {**data, "best": 3}, **HTMX).status_code == 409  # key reused
    same = client.post(target, answer(best=1, worst=1), **HTMX)
    assert same.status_code == 400 and "different texts" in same.text
    outside = client.post(target, answer(best=4, worst=0), **HTMX)
    assert outside.status_code == 400 and "0 to 3" in outside.text
    saved = BestWorst.objects.get()
    assert (saved.best, saved.worst) == (2, 0)
    assert BestWorstSlot.objects.get(unit_id=first.unit_id, annotator=ann).done_at is not None
    page = client.get(url(setup.study, f"best-worst/{first.unit_id}/"), **HTMX)
    assert 'id="revisit"' in page.text and "best: text 3, worst: text 1" in page.text


def test_each_tuple_gets_its_answers_from_different_annotators():
    setup = bws_setup(annotators=3)
    study = setup.study
    for ann in setup.annotators:
        while (slot := BEST_WORST.next(study=study, person=ann)) is not None:
            BEST_WORST.submit(
                study=study,
                person=ann,
                unit={"unit_id": slot.unit_id},
                answer={"best": 0, "worst": 3},
                idempotency_key=uuid.uuid4(),
            )
    per_tuple = Counter(BestWorst.objects.values_list("unit_id", flat=True))
    assert set(per_tuple.values()) == {2} and len(per_tuple) == 10
    pairs = BestWorst.objects.values_list("unit_id", "annotator_id")
    assert len(set(pairs)) == 20


def test_a_changed_item_gets_a_new_design_and_keeps_what_was_answered():
    setup = bws_setup()
    study, ann = setup.study, setup.annotators[0]
    slot = BEST_WORST.next(study=study, person=ann)
    BEST_WORST.submit(
        study=study,
        person=ann,
        unit={"unit_id": slot.unit_id},
        answer={"best": 1, "worst": 2},
        idempotency_key=uuid.uuid4(),
    )
    new = PerturbationFactory(item=setup.item, kind=setup.kinds[0], text="Another one.")
    StudyPerturbation.objects.create(study=study, perturbation=new, position=99)
    study_plan_build(study=study)
    active = BestWorstTuple.objects.filter(study=study, active=True)
    assert active.count() == 12  # 2N for N = 6 texts
    assert {text for t in active for text in t.texts} >= {new.pk, None}
    kept = BestWorstTuple.objects.get(pk=slot.unit_id)
    assert not kept.active and BestWorst.objects.filter(unit=kept).exists()
    assert BestWorstTuple.objects.filter(study=study, active=False).count() == 1  # others gone


def test_the_api_answers_tuples(api_client):
    setup = bws_setup()
    ann = setup.annotators[0]
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=ann).key}")
    api = f"/api/v1/studies/{setup.study.pk}/"
    item = api_client.post(api + "best-worst/next/").json()
    assert len(item["texts"]) == 4 and "summary" in item["criterion_text"]
    body = {"unit": item["unit"], "best": 3, "worst": 1, "idempotency_key": str(uuid.uuid4())}
    first = api_client.post(api + "best-worst/", body, format="json")
    repeat = api_client.post(api + "best-worst/", body, format="json")
    assert (first.status_code, repeat.status_code) == (201, 200)
    saved = first.json()
    assert (saved["best"], saved["worst"]) == (3, 1) and len(saved["texts"]) == 4
    same = {**body, "worst": 3, "idempotency_key": str(uuid.uuid4())}
    assert api_client.post(api + "best-worst/", same, format="json").status_code == 400
    nxt = api_client.post(api + "best-worst/next/").json()
    skip = api_client.post(api + "best-worst/skip/", {"unit": nxt["unit"]}, format="json")
    assert skip.status_code == 204
    assert api_client.get(api + "best-worst/").json()["count"] == 1


def test_a_researcher_opts_in_on_the_set_up_page(client, researcher):
    dataset = DatasetFactory(owner=researcher)
    item = SourceItemFactory(dataset=dataset)
    kind_text = [PerturbationFactory(item=item) for _ in range(3)]
    criterion = CriterionFactory(key="fluency-bws")
    client.force_login(researcher)
    form = client.post(reverse("study-new"), {"step": "3", "go": "3"}).text  # human work
    assert 'name="best_worst_criteria"' in form and 'name="best_worst_size"' in form
    response = client.post(
        reverse("study-new"),
        {
            "name": "Scaled",
            "datasets": [dataset.pk],
            "kinds": sorted({p.kind_id for p in kind_text}),
            "best_worst_criteria": [criterion.pk],
            "best_worst_size": 3,
            "best_worst_overlap": 1,
            "vetting_overlap": 1,
            "comparison_groups": 1,
            "lease_minutes": 30,
        },
    )
    assert response.status_code == 302, response.text[:2000]
    study = Study.objects.get(name="Scaled")
    tuples = BestWorstTuple.objects.filter(study=study)
    assert tuples.count() == 8 and all(len(t.texts) == 3 for t in tuples)  # 2N of 3, N = 4
    assert BestWorstSlot.objects.filter(study=study).count() == 8
