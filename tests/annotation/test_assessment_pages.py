"""Direct assessment through the pages and the API: roles, the keyboard page, saving once,
409s, set-up, progress, and the queries next and submit need."""

import uuid

import pytest
from django.urls import reverse
from rest_framework.authtoken.models import Token

from apps.annotation.models import (
    Assessment,
    AssessmentSlot,
    AssessmentUnit,
    JudgementChange,
    Study,
)
from apps.annotation.services import ASSESSMENT
from tests.annotation.factories import study_setup
from tests.annotation.recent import recent_list
from tests.factories import CriterionFactory, DatasetFactory, SourceItemFactory, UserFactory

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def setup():
    return study_setup(perturbations=2, annotators=2, experts=1, aspects=2, assess=True)


def url(study, tail=""):
    return f"/studies/{study.pk}/{tail}"


def rating(score=4, key=None, based_on=None):
    data = {"score": score, "idempotency_key": str(key or uuid.uuid4())}
    if based_on is not None:
        data["based_on"] = based_on
    return data


def as_user(client, user):
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


@pytest.mark.parametrize(
    ("who", "status"), [("annotator", 200), ("expert", 403), ("owner", 403), ("outsider", 404)]
)
def test_only_the_studys_annotators_rate(client, setup, who, status):
    users = {
        "annotator": setup.annotators[0],
        "expert": setup.experts[0],
        "owner": setup.study.owner,
        "outsider": UserFactory(username="outsider", role="annotator"),
    }
    client.force_login(users[who])
    assert client.get(url(setup.study, "assess/")).status_code == status
    unit = AssessmentUnit.objects.order_by("position").last()  # handed to nobody
    posted = client.post(url(setup.study, f"assess/{unit.pk}/rating/"), rating())
    assert posted.status_code == (status if status != 200 else 403)  # not handed to them
    assert not Assessment.objects.exists()


def test_the_page_shows_the_text_the_criterion_and_keys(client, setup):
    client.force_login(setup.annotators[0])
    page = client.get(url(setup.study, "assess/"))
    body = page.text
    assert page.status_code == 200
    assert "The council met on Tuesday." in body  # the source
    assert "How good the summary is" in body  # the criterion, with the task's text name
    for score in range(1, 6):
        assert f'value="{score}" data-key="{score}" data-pick required' in body
    assert 'data-key="Enter" data-submit' in body and 'data-key="s"' in body
    assert "Perturbed" not in body  # raters are not told which text was perturbed
    slot = ASSESSMENT.next(study=setup.study, person=setup.annotators[0])
    assert f"/assess/{slot.unit_id}/rating/" in body


def test_submit_saves_once_and_answers_the_next_text(client, setup):
    ann = setup.annotators[0]
    client.force_login(ann)
    first = ASSESSMENT.next(study=setup.study, person=ann)
    target = url(setup.study, f"assess/{first.unit_id}/rating/")
    data = rating(score=2, based_on=0)
    response = client.post(target, data, **HTMX)
    assert response.status_code == 200 and "judgement-saved" in response["HX-Trigger"]
    assert "Saved: 2 (on 1-5)" in response["HX-Trigger"]
    assert response.text.lstrip().startswith('<section id="work"')
    assert f"/assess/{first.unit_id}/" in response.text  # "back" leads to the one just saved
    recent = recent_list(client, response.text)
    link = reverse("assess-item", args=[setup.study.pk, first.unit_id])
    assert f'<a href="{link}" hx-get="{link}"' in recent and f"text #{first.unit_id}," in recent
    assert client.post(target, data, **HTMX).status_code == 200  # a double click
    assert Assessment.objects.count() == 1 and JudgementChange.objects.count() == 1
    reused = client.post(target, {**data, "score": 5}, **HTMX)
    assert reused.status_code == 409
    stale = client.post(target, rating(score=5, based_on=0), **HTMX)
    assert stale.status_code == 409 and "another tab" in stale.text
    off_scale = client.post(target, rating(score=9), **HTMX)
    assert off_scale.status_code == 400 and "scale" in off_scale.text
    assert Assessment.objects.get().score == 2
    assert client.post(target, {"score": "x"}).status_code == 400


def test_back_skip_and_nothing_left(client):
    setup = study_setup(perturbations=1, annotators=1, aspects=1, assess=True)
    ann = setup.annotators[0]
    client.force_login(ann)
    slot = ASSESSMENT.next(study=setup.study, person=ann)
    skipped = client.post(url(setup.study, f"assess/{slot.unit_id}/skip/"), **HTMX)
    assert skipped.status_code == 200 and "Skipped" in skipped["HX-Trigger"]
    other = ASSESSMENT.next(study=setup.study, person=ann)
    assert other.unit_id != slot.unit_id
    client.post(url(setup.study, f"assess/{other.unit_id}/rating/"), rating(score=1), **HTMX)
    page = client.get(url(setup.study, f"assess/{other.unit_id}/"), **HTMX)
    assert 'id="revisit"' in page.text
    assert 'value="1" data-key="1" data-pick required checked' in page.text
    client.post(url(setup.study, f"assess/{other.unit_id}/rating/"), rating(score=3), **HTMX)
    assert Assessment.objects.get().score == 3 and JudgementChange.objects.count() == 2
    last = ASSESSMENT.next(study=setup.study, person=ann)  # the skipped one, last
    assert last.unit_id == slot.unit_id
    client.post(url(setup.study, f"assess/{last.unit_id}/rating/"), rating(), **HTMX)
    done = client.get(url(setup.study, "assess/"))
    assert 'id="no-work"' in done.text and "0 of 2 ratings still open" in done.text


def test_next_and_submit_need_few_queries(client, django_assert_max_num_queries):
    setup = study_setup(perturbations=6, annotators=1, aspects=2, assess=True)
    ann = setup.annotators[0]
    client.force_login(ann)
    client.get(url(setup.study, "assess/"))  # claims the first text
    with django_assert_max_num_queries(13):
        page = client.get(url(setup.study, "assess/"))
    assert page.status_code == 200
    slot = ASSESSMENT.next(study=setup.study, person=ann)
    with django_assert_max_num_queries(24):
        saved = client.post(
            url(setup.study, f"assess/{slot.unit_id}/rating/"), rating(based_on=0), **HTMX
        )
    assert saved.status_code == 200 and Assessment.objects.count() == 1


def test_the_api_rates_texts(api_client, setup, django_assert_max_num_queries):
    ann = setup.annotators[0]
    as_user(api_client, ann)
    api = f"/api/v1/studies/{setup.study.pk}/"
    with django_assert_max_num_queries(12):
        item = api_client.post(api + "assessments/next/").json()
    assert item["scale_min"] == 1 and item["scale_max"] == 5 and "summary" in item["criterion_text"]
    assert "perturbed" not in item  # blind
    body = {"unit": item["unit"], "score": 4, "idempotency_key": str(uuid.uuid4())}
    with django_assert_max_num_queries(14):
        first = api_client.post(api + "assessments/", body, format="json")
    repeat = api_client.post(api + "assessments/", body, format="json")
    assert (first.status_code, repeat.status_code) == (201, 200)
    assert first.json()["score"] == 4 and first.json()["criterion"].startswith("s-")
    changed = api_client.post(api + "assessments/", {**body, "score": 2}, format="json")
    assert changed.status_code == 409
    off = {**body, "score": 0, "idempotency_key": str(uuid.uuid4())}
    assert api_client.post(api + "assessments/", off, format="json").status_code == 400
    nxt = api_client.post(api + "assessments/next/").json()
    skip = api_client.post(api + "assessments/skip/", {"unit": nxt["unit"]}, format="json")
    assert skip.status_code == 204
    assert api_client.get(api + "assessments/").json()["count"] == 1
    as_user(api_client, setup.study.owner)
    assert api_client.get(api + "assessments/").json()["count"] == 1  # researchers: all
    assert api_client.post(api + "assessments/next/").status_code == 403
    as_user(api_client, setup.experts[0])
    assert api_client.get(api + "assessments/").status_code == 403


def test_a_researcher_opts_in_on_the_set_up_page_and_the_api(client, api_client, researcher):
    dataset = DatasetFactory(owner=researcher)
    SourceItemFactory(dataset=dataset)
    SourceItemFactory(dataset=dataset)
    criterion = CriterionFactory(key="fluency-1")
    client.force_login(researcher)
    form = client.post(reverse("study-new"), {"step": "3", "go": "3"}).text  # human work
    assert 'name="assessment_criteria"' in form and 'name="assessment_overlap"' in form
    response = client.post(
        reverse("study-new"),
        {
            "name": "Rated",
            "datasets": [dataset.pk],
            "assessment_criteria": [criterion.pk],
            "assessment_overlap": 3,
            "assessment_texts": "originals",
            "vetting_overlap": 1,
            "comparison_groups": 1,
            "lease_minutes": 30,
        },
    )
    assert response.status_code == 302
    study = Study.objects.get(name="Rated")
    assert study.assessment_units.count() == 2  # two originals x one criterion
    assert AssessmentSlot.objects.filter(study=study).count() == 6  # three ratings each
    as_user(api_client, researcher)
    changed = api_client.patch(
        f"/api/v1/studies/{study.pk}/",
        {"assessment_criteria": [], "assessment_overlap": 2},
        format="json",
    )
    assert changed.status_code == 200 and changed.json()["assessment_criteria"] == []
    assert not AssessmentSlot.objects.filter(study=study).exists()  # nothing rated: all gone
    made = api_client.post(
        "/api/v1/studies/",
        {"name": "Rated by API", "assessment_criteria": ["fluency-1"], "assessment_texts": "both"},
        format="json",
    )
    assert made.status_code == 201 and made.json()["assessment_criteria"] == ["fluency-1"]


def test_progress_page_and_study_page_count_ratings(client, setup):
    ann = setup.annotators[0]
    client.force_login(ann)
    assert "Rate texts" in client.get(url(setup.study)).text  # the annotator's button
    slot = ASSESSMENT.next(study=setup.study, person=ann)
    client.post(url(setup.study, f"assess/{slot.unit_id}/rating/"), rating(), **HTMX)
    client.force_login(setup.study.owner)
    page = client.get(url(setup.study, "progress/")).text
    assert '<dd id="assessment-count">1</dd>' in page
    assert '<dd id="assessment-done">1 / 8</dd>' in page
    assert "<th>Direct assessment</th>" in page
    client.force_login(setup.experts[0])
    assert "Rate texts" not in client.get(url(setup.study)).text
