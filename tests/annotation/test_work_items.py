"""What the API hands out reads like the page of the same unit: the same texts, in the same
order, the same criterion, scale and task. On PostgreSQL the API's item is read by the
statement that hands the unit out and the page's by one statement of its own
(selectors/shown.py), so both are checked against each other, and against a person's answer
given before (the page shows it, and the API's `based_on` is its version)."""

from __future__ import annotations

import uuid

import pytest
from rest_framework.authtoken.models import Token

from apps.annotation.models import GoldCheckSlot, judgement_version
from apps.annotation.services import study_plan_build
from apps.annotation.services.assessing import ASSESSMENT
from apps.annotation.services.gold_checks import GOLD_CHECK
from apps.catalog.models import KindFamily, PerturbationKind
from apps.corpus.models import Perturbation
from tests.annotation.factories import study_setup
from tests.annotation.recent import recent_list

pytestmark = pytest.mark.django_db


def _api(api_client, user):
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return api_client


def test_a_comparison_reads_the_same_through_the_api_and_the_page(api_client, client):
    setup = study_setup(perturbations=3, annotators=1, aspects=2, comparisons_need_vetting=False)
    person, study = setup.annotators[0], setup.study
    item = _api(api_client, person).post(f"/api/v1/studies/{study.pk}/comparisons/next/").json()
    client.force_login(person)
    page = client.get(f"/studies/{study.pk}/compare/{item['perturbation']}/{item['criterion']}/")
    shown = page.context["item"]
    assert (item["first"], item["second"]) == (shown.first_text, shown.second_text)
    assert item["original_first"] == shown.original_first
    assert item["criterion_text"] == shown.criterion_text and "summary" in item["criterion_text"]
    assert item["source"] == shown.perturbation.item.source
    assert shown.held and shown.comparison is None
    assert page.context["progress"]["comparison"].mine == 6  # 3 pairs x 2 criteria, none done


def test_a_text_to_rate_reads_the_same_through_the_api_and_the_page(api_client, client):
    setup = study_setup(perturbations=2, annotators=1, aspects=1, assess=True)
    person, study = setup.annotators[0], setup.study
    api = _api(api_client, person)
    item = api.post(f"/api/v1/studies/{study.pk}/assessments/next/").json()
    client.force_login(person)
    shown = client.get(f"/studies/{study.pk}/assess/{item['unit']}/").context["item"]
    assert (item["text"], item["text_name"]) == (shown.text, "summary")
    assert item["criterion_text"] == shown.criterion_text
    assert (item["scale_min"], item["scale_max"]) == (shown.scale[0], shown.scale[-1])
    assert item["criterion"] == shown.unit.criterion.key and item["based_on"] == 0
    assert shown.held and shown.assessment is None and shown.based_on == 0


def test_a_rating_given_shows_on_the_page_with_its_version(api_client, client):
    setup = study_setup(perturbations=2, annotators=1, aspects=1, assess=True)
    person, study = setup.annotators[0], setup.study
    api = _api(api_client, person)
    unit = api.post(f"/api/v1/studies/{study.pk}/assessments/next/").json()["unit"]
    body = {"unit": unit, "score": 2, "idempotency_key": str(uuid.uuid4())}
    saved = api.post(f"/api/v1/studies/{study.pk}/assessments/", body, format="json")
    assert saved.status_code == 201 and saved.json()["criterion"].startswith("s-")
    client.force_login(person)
    page = client.get(f"/studies/{study.pk}/assess/{unit}/")
    shown = page.context["item"]
    assert not shown.held and shown.assessment.score == 2
    assert shown.based_on == judgement_version(shown.assessment) > 0
    assert page.context["progress"]["assessment"].done == 1
    # Changed from the page on the version it showed: saved; on an older one: refused.
    rating = {"score": 3, "idempotency_key": str(uuid.uuid4()), "based_on": shown.based_on}
    target = f"/studies/{study.pk}/assess/{unit}/rating/"
    assert client.post(target, rating, HTTP_HX_REQUEST="true").status_code == 200
    stale = {**rating, "idempotency_key": str(uuid.uuid4())}
    assert client.post(target, stale, HTTP_HX_REQUEST="true").status_code == 409
    assert ASSESSMENT.model.objects.get().score == 3


def test_a_score_off_the_scale_is_refused_and_nothing_saved(api_client):
    setup = study_setup(perturbations=1, annotators=1, aspects=1, assess=True)
    person, study = setup.annotators[0], setup.study
    api = _api(api_client, person)
    item = api.post(f"/api/v1/studies/{study.pk}/assessments/next/").json()
    body = {
        "unit": item["unit"],
        "score": item["scale_max"] + 1,
        "idempotency_key": str(uuid.uuid4()),
    }
    assert (
        api.post(f"/api/v1/studies/{study.pk}/assessments/", body, format="json").status_code == 400
    )
    assert not ASSESSMENT.model.answers.exists()
    assert ASSESSMENT.holds(study=study, person=person)  # still theirs to rate


def test_an_adversarial_text_reads_the_same_through_the_api_and_the_page(api_client, client):
    setup = study_setup(perturbations=2, annotators=1, build=False)
    PerturbationKind.objects.filter(pk__in=[k.pk for k in setup.kinds]).update(
        family=KindFamily.ADVERSARIAL
    )
    Perturbation.objects.update(parameters={"criterion_text": "Is the summary faithful?"})
    study_plan_build(study=setup.study)
    person, study = setup.annotators[0], setup.study
    item = _api(api_client, person).post(f"/api/v1/studies/{study.pk}/gold-checks/next/").json()
    client.force_login(person)
    shown = client.get(f"/studies/{study.pk}/gold-check/{item['perturbation']}/").context["item"]
    assert item["task"] == shown.task_name and item["task"]  # the dataset's task
    assert item["task_description"] == shown.task_description
    assert item["criterion_text"] == shown.criterion_text == "Is the summary faithful?"
    assert (item["text"], item["text_name"]) == (shown.perturbation.text, "summary")
    assert item["source"] == shown.perturbation.item.source and item["based_on"] == 0
    assert shown.held and GoldCheckSlot.objects.filter(annotator=person).count() == 1
    assert GOLD_CHECK.holds(study=study, person=person)


def test_someone_elses_unit_is_not_shown(client):
    setup = study_setup(perturbations=2, annotators=2, aspects=1, assess=True)
    study = setup.study
    first, second = setup.annotators
    unit = ASSESSMENT.next(study=study, person=first).unit_id
    client.force_login(second)
    assert client.get(f"/studies/{study.pk}/assess/{unit}/").status_code == 404
    assert client.get(f"/studies/{study.pk}/assess/999999/").status_code == 404


def test_the_pages_list_the_last_answers_and_go_back_to_them(client):
    setup = study_setup(
        perturbations=2, annotators=1, aspects=1, assess=True, comparisons_need_vetting=False
    )
    person, study = setup.annotators[0], setup.study
    client.force_login(person)
    hx = {"HTTP_HX_REQUEST": "true"}
    # A comparison, then the next pair lists it (with its criterion's aspect) and goes back.
    shown = client.get(f"/studies/{study.pk}/compare/", **hx).context["item"]
    pair = f"{shown.perturbation.pk}/{shown.criterion.pk}/"
    choice = {"choice": "A", "original_first": "1", "idempotency_key": str(uuid.uuid4())}
    page = client.post(f"/studies/{study.pk}/compare/{pair}choice/", choice, **hx)
    listed = recent_list(client, page.content.decode())
    assert f"pair #{shown.perturbation.pk}, {shown.criterion.aspect.name}</a>: A" in listed
    assert page.context["nav"]["back"] == f"/studies/{study.pk}/compare/{pair}"
    assert page.context["progress"]["comparison"].done == 1
    # A rating, likewise.
    unit = client.get(f"/studies/{study.pk}/assess/", **hx).context["item"].unit
    rating = {"score": 2, "idempotency_key": str(uuid.uuid4()), "based_on": 0}
    page = client.post(f"/studies/{study.pk}/assess/{unit.pk}/rating/", rating, **hx)
    listed = recent_list(client, page.content.decode())
    assert f"text #{unit.pk}, {unit.criterion.aspect.name}</a>: 2" in listed
    assert page.context["nav"]["back"] == f"/studies/{study.pk}/assess/{unit.pk}/"


def test_the_gold_check_page_lists_the_last_labels(client):
    setup = study_setup(perturbations=2, annotators=1, build=False)
    PerturbationKind.objects.filter(pk__in=[k.pk for k in setup.kinds]).update(
        family=KindFamily.ADVERSARIAL
    )
    study_plan_build(study=setup.study)
    person, study = setup.annotators[0], setup.study
    client.force_login(person)
    hx = {"HTTP_HX_REQUEST": "true"}
    pid = client.get(f"/studies/{study.pk}/gold-check/", **hx).context["item"].perturbation.pk
    label = {"good": "0", "idempotency_key": str(uuid.uuid4())}
    page = client.post(f"/studies/{study.pk}/gold-check/{pid}/label/", label, **hx)
    assert f"text #{pid}</a>: not good" in recent_list(client, page.content.decode())
    assert page.context["nav"]["back"] == f"/studies/{study.pk}/gold-check/{pid}/"
    assert page.context["progress"]["gold_check"].done == 1
