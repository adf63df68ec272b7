"""An LLM judge's endpoint: made, changed and shared with the judge, and usable as a generator
by exactly those who may use the judge; a study as a generation's destination."""

from __future__ import annotations

import pytest
from rest_framework.authtoken.models import Token

from apps.corpus.models import GenerationJob
from apps.endpoints.models import Endpoint
from apps.judging.models import Judge
from tests.factories import DatasetFactory, SourceItemFactory, StudyFactory, UserFactory

pytestmark = pytest.mark.django_db


def api_for(api_client, user):
    token, _ = Token.objects.get_or_create(user=user)
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return api_client


@pytest.fixture
def rita(db):
    return UserFactory(username="rita", role="researcher")


@pytest.fixture
def beta(db):
    return UserFactory(username="beta", role="researcher")


def test_a_judge_made_in_the_api_gets_an_endpoint_named_owned_and_shared_like_it(
    api_client, rita, beta
):
    api = api_for(api_client, rita)
    body = {"name": "writer", "base_url": "http://127.0.0.1:9/v1", "model": "m1"}
    made = api.post("/api/v1/judges/", body | {"requests_per_minute": 30}, format="json")
    assert made.status_code == 201, made.json()
    assert made.json()["requests_per_minute"] == 30 and made.json()["model"] == "m1"
    judge = Judge.objects.get(pk=made.json()["id"])
    assert (judge.endpoint.name, judge.endpoint.owner, judge.endpoint.model) == (
        "writer",
        rita,
        "m1",
    )
    changes = {"name": "author", "model": "m2", "shared_with": ["beta"]}
    edited = api.patch(f"/api/v1/judges/{judge.pk}/", changes, format="json")
    assert edited.status_code == 200, edited.json()
    endpoint = Endpoint.objects.get(pk=judge.endpoint_id)  # the same endpoint, changed
    assert (endpoint.name, endpoint.model) == ("author", "m2")
    assert list(endpoint.shared_with.all()) == []  # offered: beta has not accepted yet
    offer = api_for(api_client, beta).get("/api/v1/judge-offers/").json()["results"][0]
    assert api_client.post(f"/api/v1/judge-offers/{offer['id']}/accept/").status_code == 200
    assert list(endpoint.shared_with.all()) == [beta]
    assert Endpoint.objects.count() == 1


def test_a_metric_judge_has_no_endpoint_and_the_api_says_so(api_client, rita):
    api = api_for(api_client, rita)
    made = api.post("/api/v1/judges/", {"name": "b", "kind": "metric", "metric": "bleu"}, "json")
    assert made.status_code == 201, made.json()
    assert made.json()["base_url"] is None and made.json()["max_concurrency"] is None
    assert Judge.objects.get(pk=made.json()["id"]).endpoint is None
    assert not Endpoint.objects.exists()


def test_only_those_who_may_use_the_judge_generate_with_its_endpoint(
    api_client, client, rita, beta, catalog
):
    judge = api_for(api_client, rita).post(
        "/api/v1/judges/",
        {"name": "rita's writer", "base_url": "http://127.0.0.1:9/v1", "model": "m"},
        format="json",
    )
    dataset = DatasetFactory(owner=beta)
    SourceItemFactory(dataset=dataset)
    body = {"dataset": dataset.pk, "kinds": ["negation"], "generator": "rita's writer"}
    api = api_for(api_client, beta)
    refused = api.post("/api/v1/generation-jobs/", body, format="json")
    assert refused.status_code == 400 and "generator" in refused.json()
    client.force_login(beta)
    page = client.get("/generate/").content.decode()
    assert "rita&#x27;s writer" not in page and "rita's writer" not in page
    api_for(api_client, rita).patch(
        f"/api/v1/judges/{judge.json()['id']}/", {"shared_with": ["beta"]}, format="json"
    )
    offered = api_for(api_client, beta).post("/api/v1/generation-jobs/", body, format="json")
    assert offered.status_code == 400 and "generator" in offered.json()  # not accepted yet
    offer = api_client.get("/api/v1/judge-offers/").json()["results"][0]
    assert api_client.post(f"/api/v1/judge-offers/{offer['id']}/accept/").status_code == 200
    accepted = api_client.post("/api/v1/generation-jobs/", body, format="json")
    assert accepted.status_code == 201, accepted.json()
    job = GenerationJob.objects.get(pk=accepted.json()["id"])
    assert job.generator == Judge.objects.get(pk=judge.json()["id"]).endpoint


def test_a_generation_goes_to_ones_own_studies_only(api_client, rita, beta, catalog):
    dataset = DatasetFactory(owner=beta)
    theirs, mine = StudyFactory(owner=rita), StudyFactory(owner=beta)
    api = api_for(api_client, beta)
    body = {"dataset": dataset.pk, "kinds": ["word-exchange"]}
    refused = api.post("/api/v1/generation-jobs/", body | {"study": theirs.pk}, format="json")
    assert refused.status_code == 400 and "study" in refused.json()
    accepted = api.post("/api/v1/generation-jobs/", body | {"study": mine.pk}, format="json")
    assert accepted.status_code == 201 and accepted.json()["study"] == mine.pk
    assert GenerationJob.objects.get().deliver_to == {"study": mine.pk}
