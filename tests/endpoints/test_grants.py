"""Keys are granted, not grabbed: a researcher's judge may name only a key variable an
administrator granted them (by name or group), and a grant bound to hosts never sends its key
elsewhere (apps.endpoints.models.KeyGrant, docs/endpoints.md, Keys)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from rest_framework.authtoken.models import Token

from apps.endpoints.models import Endpoint, KeyGrant
from apps.judging.models import Judge, JudgeCall, ParseStatus
from apps.judging.services import judge_run_rerun
from tests.factories import UserFactory, key_grant, llm_judge_save
from tests.fakes.fixtures import fake_openai_server as fake_openai_server  # the shared fixture
from tests.judging.conftest import criteria as criteria  # the judging tests' fixtures
from tests.judging.conftest import demo as demo
from tests.judging.conftest import work
from tests.judging.test_runs import one_text

pytestmark = pytest.mark.django_db
SECRET = "sk-granted-0123456789"
VARIABLE = "DISCERN_KEY_LAB"


@pytest.fixture
def lab_key(monkeypatch):
    monkeypatch.setenv(VARIABLE, SECRET)


def body(server, **fields):
    return {"name": "mine", "base_url": server.base_url, "model": "m"} | fields


def test_a_researcher_without_a_grant_cannot_name_a_key(
    demo, api_client, client, fake_openai_server
):
    key_grant("DISCERN_KEY_OTHER", demo.owner)
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=demo.owner)}")
    response = api_client.post(
        "/api/v1/judges/", body(fake_openai_server, api_key_env=VARIABLE), format="json"
    )
    assert response.status_code == 400
    error = response.json()["api_key_env"][0]
    assert f"{VARIABLE} is not granted to you" in error
    assert "keys granted to you: DISCERN_KEY_OTHER" in error
    client.force_login(demo.owner)
    form = client.get("/judging/judges/new/").content.decode()
    assert "Keys granted to you: DISCERN_KEY_OTHER." in form  # what they may name, up front
    page = client.post(
        "/judging/judges/new/", body(fake_openai_server, api_key_env=VARIABLE, kind="llm")
    )
    assert page.status_code == 200 and f"{VARIABLE} is not granted to you" in page.content.decode()
    assert not Judge.objects.filter(name="mine").exists()


def test_a_grant_by_name_or_by_group_lets_them_name_it(demo, fake_openai_server):
    with pytest.raises(ValidationError):
        llm_judge_save(user=demo.owner, api_key_env=VARIABLE, **body(fake_openai_server))
    group = Group.objects.create(name="lab")
    demo.owner.groups.add(group)
    KeyGrant.objects.create(variable=VARIABLE).groups.add(group)
    judge = llm_judge_save(user=demo.owner, api_key_env=VARIABLE, **body(fake_openai_server))
    assert judge.endpoint.api_key_env == VARIABLE
    other = UserFactory(username="other", role="researcher")
    with pytest.raises(ValidationError, match="none is granted to you"):
        llm_judge_save(user=other, api_key_env=VARIABLE, **body(fake_openai_server))


def test_a_key_bound_to_hosts_is_refused_for_another_host(demo, fake_openai_server):
    key_grant(VARIABLE, demo.owner, hosts="api.openai.com\n*.example.org")
    with pytest.raises(ValidationError) as error:
        llm_judge_save(user=demo.owner, api_key_env=VARIABLE, **body(fake_openai_server))
    message = error.value.message_dict["api_key_env"][0]
    assert f"{VARIABLE} may be sent only to *.example.org, api.openai.com, not to 127.0.0.1" in (
        message
    )
    bound = body(fake_openai_server, base_url="https://models.example.org/v1")
    assert llm_judge_save(user=demo.owner, api_key_env=VARIABLE, **bound).endpoint is not None


def test_a_granted_key_is_never_sent_outside_its_binding(
    demo, criteria, fake_openai_server, lab_key
):
    """The address changed behind the checks (the row written directly): the worker refuses
    the key there, sends nothing, and the call says why. Back within the binding, it works."""
    item = demo.datasets.get().items.order_by("id").first()
    grant = key_grant(VARIABLE, demo.owner)
    judge = llm_judge_save(user=demo.owner, api_key_env=VARIABLE, **body(fake_openai_server))
    grant.hosts = "api.openai.com"
    grant.save()
    run = work(one_text(demo, judge, "fbi-single-vanilla", criteria("overall"), item))
    call = run.calls.get()
    assert call.parse_status == ParseStatus.ERROR
    assert f"{VARIABLE} may be sent only to api.openai.com" in call.error
    assert fake_openai_server.request_count == 0
    grant.hosts = "127.0.0.1"
    grant.save()
    again = work(judge_run_rerun(run=run, user=demo.owner))
    assert again.done == 1
    assert {r.headers.get("authorization") for r in fake_openai_server.requests} == {
        f"Bearer {SECRET}"
    }


def test_a_revoked_grant_stops_the_calls(demo, criteria, fake_openai_server, lab_key):
    item = demo.datasets.get().items.order_by("id").first()
    grant = key_grant(VARIABLE, demo.owner)
    judge = llm_judge_save(user=demo.owner, api_key_env=VARIABLE, **body(fake_openai_server))
    grant.users.clear()
    run = work(one_text(demo, judge, "fbi-single-vanilla", criteria("overall"), item))
    assert f"{VARIABLE} is not granted to you" in run.calls.get().error
    assert fake_openai_server.request_count == 0
    assert not JudgeCall.objects.filter(error__contains=SECRET).exists()


def test_a_judge_without_a_key_needs_no_grant(demo, fake_openai_server):
    judge = llm_judge_save(user=demo.owner, **body(fake_openai_server))
    assert judge.endpoint.api_key_env == "" and judge.endpoint.key_problem() is None


def test_upgrading_grants_each_key_in_use_to_the_owners_using_it(demo):
    """Migration endpoints 0002 ran before this test's data; its function, run on the data,
    grants what the endpoints name, so nobody's judge stops at the upgrade."""
    from importlib import import_module

    from django.apps import apps

    migration = import_module("apps.endpoints.migrations.0002_key_grants")
    other = UserFactory(username="other", role="researcher")
    for owner, name in ((demo.owner, "a"), (other, "b")):
        Endpoint.objects.create(
            owner=owner, name=name, base_url="https://h/v1", model="m", api_key_env=VARIABLE
        )
    Endpoint.objects.create(owner=other, name="c", base_url="https://h/v1", model="m")
    migration.grant_the_keys_in_use(apps, None)
    grant = KeyGrant.objects.get()
    assert grant.variable == VARIABLE and set(grant.users.all()) == {demo.owner, other}
    assert grant.hosts == ""
