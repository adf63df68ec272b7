"""Judges belong to a researcher, and a judge can never make a worker send its secrets.

A judge names its key variable from an allow-list (DISCERN_KEY_..., or DISCERN_KEY_VARIABLES);
anything else is refused when saved and again when a call is made (see docs/judging.md).
"""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.forms.models import model_to_dict
from rest_framework.authtoken.models import Token

from apps.endpoints.models import Endpoint
from apps.judging.models import Judge, JudgeCall, ParseStatus
from apps.judging.services import judge_save
from tests.factories import (
    DatasetFactory,
    SourceItemFactory,
    UserFactory,
    key_grant,
    llm_judge_save,
)
from tests.judging.conftest import llm_judge, strategy, work
from tests.judging.test_runs import one_text

pytestmark = pytest.mark.django_db
SECRET = "sk-alpha-secret-0123456789"


@pytest.fixture
def beta(db):
    return UserFactory(username="beta", role="researcher")


def token_client(api_client, user):
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user)}")
    return api_client


def alpha_judge(demo, server, **options) -> Judge:
    fields = {"name": "alpha judge", "base_url": server.base_url, "model": "m"} | options
    return llm_judge_save(user=demo.owner, **fields)


# --- another researcher's judge ---------------------------------------------------------------


def test_another_researcher_cannot_edit_or_use_a_judge(demo, beta, api_client, fake_openai_server):
    key_grant("DISCERN_KEY_ALPHA", demo.owner, beta)
    judge = alpha_judge(demo, fake_openai_server, api_key_env="DISCERN_KEY_ALPHA")
    before = model_to_dict(Judge.objects.get(pk=judge.pk))
    endpoint_before = model_to_dict(Endpoint.objects.get(judges=judge))
    api = token_client(api_client, beta)
    hijack = {"base_url": "http://127.0.0.1:9/v1", "api_key_env": "DISCERN_KEY_ALPHA"}
    assert api.patch(f"/api/v1/judges/{judge.pk}/", hijack, format="json").status_code == 404
    assert api.get(f"/api/v1/judges/{judge.pk}/").status_code == 404
    own = SourceItemFactory(dataset=DatasetFactory(owner=beta)).dataset
    run = api.post(
        "/api/v1/judge-runs/",
        {"judge": judge.pk, "strategy": strategy("fbi-single-vanilla").pk, "dataset": own.pk},
        format="json",
    )
    assert run.status_code == 400 and "no such judge" in str(run.json())
    with pytest.raises(PermissionDenied):
        judge_save(judge=Judge.objects.get(pk=judge.pk), user=beta)
    assert model_to_dict(Judge.objects.get(pk=judge.pk)) == before
    assert model_to_dict(Endpoint.objects.get(judges=judge)) == endpoint_before


def test_the_owner_edits_their_judge_and_nobody_edits_the_shipped_ones(
    demo, beta, client, api_client, fake_openai_server
):
    judge = alpha_judge(demo, fake_openai_server)
    api = token_client(api_client, demo.owner)
    edited = api.patch(f"/api/v1/judges/{judge.pk}/", {"model": "m2"}, format="json")
    assert edited.status_code == 200 and Judge.objects.get(pk=judge.pk).endpoint.model == "m2"
    bleu = Judge.objects.get(name="BLEU")
    assert bleu.created_by is None
    refused = api.patch(f"/api/v1/judges/{bleu.pk}/", {"name": "mine"}, format="json")
    assert refused.status_code == 404 and Judge.objects.get(pk=bleu.pk).name == "BLEU"
    assert api.get(f"/api/v1/judges/{bleu.pk}/").status_code == 200  # read-only, usable
    client.force_login(beta)
    listed = client.get("/judging/judges/").content.decode()
    assert "BLEU" in listed and "shipped, read-only" in listed and "alpha judge" not in listed
    assert client.get(f"/judging/judges/{bleu.pk}/").status_code == 404


def test_names_are_unique_per_owner(demo, beta, api_client, fake_openai_server):
    alpha_judge(demo, fake_openai_server)
    body = {"name": "alpha judge", "base_url": fake_openai_server.base_url, "model": "m"}
    theirs = token_client(api_client, beta).post("/api/v1/judges/", body, format="json")
    assert theirs.status_code == 201, theirs.json()
    assert Judge.objects.get(pk=theirs.json()["id"]).created_by == beta
    with pytest.raises(ValidationError) as error:
        alpha_judge(demo, fake_openai_server)
    assert "name" in error.value.message_dict


# --- key variables and addresses --------------------------------------------------------------


@pytest.mark.parametrize("name", ["DJANGO_SECRET_KEY", "DATABASE_URL", "OPENAI_API_KEY", "HOME"])
def test_a_key_variable_outside_the_allow_list_is_refused_at_save(
    demo, api_client, client, name, fake_openai_server
):
    api = token_client(api_client, demo.owner)
    body = {"name": "j", "base_url": fake_openai_server.base_url, "model": "m"}
    response = api.post("/api/v1/judges/", {**body, "api_key_env": name}, format="json")
    assert response.status_code == 400
    assert "DISCERN_KEY_" in response.json()["api_key_env"][0]
    client.force_login(demo.owner)
    page = client.post("/judging/judges/new/", {**body, "api_key_env": name, "kind": "llm"})
    assert page.status_code == 200 and "must start with DISCERN_KEY_" in page.content.decode()
    assert not Judge.objects.filter(name="j").exists()


def test_settings_may_allow_more_names(demo, fake_openai_server, settings):
    settings.DISCERN_KEY_VARIABLES = ["OPENAI_API_KEY"]
    key_grant("OPENAI_API_KEY", demo.owner)
    judge = alpha_judge(demo, fake_openai_server, api_key_env="OPENAI_API_KEY")
    assert judge.endpoint.api_key_env == "OPENAI_API_KEY"
    with pytest.raises(ValidationError):
        alpha_judge(demo, fake_openai_server, name="other", api_key_env="DATABASE_URL")


@pytest.mark.parametrize(
    "url", ["file:///etc/passwd", "ftp://h/v1", "127.0.0.1:8000/v1", "http://"]
)
def test_the_address_must_be_http(demo, api_client, url):
    api = token_client(api_client, demo.owner)
    response = api.post("/api/v1/judges/", {"name": "j", "base_url": url, "model": "m"}, "json")
    assert response.status_code == 400 and "http" in response.json()["base_url"][0]


def test_the_worker_never_sends_a_variable_outside_the_allow_list(
    demo, criteria, fake_openai_server, monkeypatch
):
    """Even a judge stored before the allow-list (its row edited directly) sends nothing."""
    item = demo.datasets.get().items.order_by("id").first()
    monkeypatch.setenv("DJANGO_SECRET_KEY", SECRET)
    judge = llm_judge(fake_openai_server)
    Endpoint.objects.filter(judges=judge).update(api_key_env="DJANGO_SECRET_KEY")
    judge.refresh_from_db()
    run = work(one_text(demo, judge, "fbi-single-vanilla", criteria("overall"), item))
    call = run.calls.get()
    assert call.parse_status == ParseStatus.ERROR and "refused" in call.error
    assert fake_openai_server.request_count == 0
    assert not JudgeCall.objects.filter(error__contains=SECRET).exists()

    monkeypatch.setenv("DISCERN_KEY_ALPHA", SECRET)
    Endpoint.objects.filter(judges=judge).update(api_key_env="DISCERN_KEY_ALPHA")
    judge.refresh_from_db()
    work(one_text(demo, judge, "fbi-single-vanilla", criteria("overall"), item))
    sent = {r.headers.get("authorization") for r in fake_openai_server.requests}
    assert sent == {f"Bearer {SECRET}"}  # the allowed variable, and only it
    stored = [str(v) for v in JudgeCall.objects.values_list("request", "raw_response", "error")]
    assert not any(SECRET in v for v in stored)


def test_a_shared_judge_is_usable_but_read_only(
    demo, beta, api_client, fake_openai_server, monkeypatch
):
    from workers.tasks import judging

    monkeypatch.setattr(judging.work_run, "delay", lambda *args: None)  # no worker needed
    judge = alpha_judge(demo, fake_openai_server)
    api = token_client(api_client, demo.owner)
    shared = api.patch(f"/api/v1/judges/{judge.pk}/", {"shared_with": ["beta"]}, format="json")
    assert shared.status_code == 200 and shared.json()["shared_with"] == ["beta"]
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=beta)}")
    assert api.get(f"/api/v1/judges/{judge.pk}/").status_code == 404  # an offer, not accepted
    offer = api.get("/api/v1/judge-offers/").json()["results"][0]
    assert api.post(f"/api/v1/judge-offers/{offer['id']}/accept/").status_code == 200
    assert api.get(f"/api/v1/judges/{judge.pk}/").status_code == 200
    refused = api.patch(f"/api/v1/judges/{judge.pk}/", {"base_url": "http://x/v1"}, "json")
    assert refused.status_code == 404
    own = SourceItemFactory(dataset=DatasetFactory(owner=beta)).dataset
    run = api.post(
        "/api/v1/judge-runs/",
        {
            "judge": judge.pk,
            "strategy": strategy("fbi-single-vanilla").pk,
            "dataset": own.pk,
            "criteria": [c.pk for c in demo.criteria.all()[:1]],
        },
        format="json",
    )
    assert run.status_code == 201, run.json()
    assert Judge.objects.get(pk=judge.pk).endpoint.base_url == fake_openai_server.base_url
