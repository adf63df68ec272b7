"""Test connection: one real call to a judge's endpoint as entered, before anything is saved,
showing the reply, how the strategy reads it and the latency; failures say why."""

from __future__ import annotations

import pytest
from rest_framework.authtoken.models import Token

from apps.endpoints.models import Endpoint
from apps.judging.models import Judge
from tests.fakes.openai_server import Fault
from tests.judging.conftest import strategy

pytestmark = pytest.mark.django_db


def form(server, **fields):
    return {
        "name": "",  # a test needs no name
        "kind": "llm",
        "base_url": server.base_url,
        "model": "judge-model",
        "default_params": "{}",
        "test_strategy": strategy("fbi-single-vanilla").pk,
        "test": "1",
    } | fields


def test_a_connection_test_shows_the_reply_how_it_is_read_and_saves_nothing(
    client, demo, fake_openai_server
):
    fake_openai_server.reply = lambda request: "I would rate it 4 out of 5.\n\n4"
    client.force_login(demo.owner)
    judges, endpoints = Judge.objects.count(), Endpoint.objects.count()
    page = client.get("/judging/judges/new/").content.decode()
    assert "Test connection" in page and "Test with strategy" in page
    page = client.post("/judging/judges/new/", form(fake_openai_server)).content.decode()
    assert "Connected" in page and 'id="test-latency"' in page
    assert "I would rate it 4 out of 5." in page  # the reply as received
    assert "score <strong>4.0</strong>" in page
    assert "The council voted to open the library" in page  # the sample prompt sent
    assert fake_openai_server.request_count == 1
    assert (Judge.objects.count(), Endpoint.objects.count()) == (judges, endpoints)


def test_an_unreadable_reply_is_shown_raw_and_flagged(client, demo, fake_openai_server):
    fake_openai_server.reply = lambda request: "It is fine, I think."
    client.force_login(demo.owner)
    page = client.post("/judging/judges/new/", form(fake_openai_server)).content.decode()
    assert "Not readable by the strategy's parser" in page and "Connected" in page
    assert "It is fine, I think." in page


def test_a_failed_call_says_why(client, demo, fake_openai_server):
    fake_openai_server.enqueue(Fault.error(401, "Incorrect API key provided"))
    client.force_login(demo.owner)
    page = client.post("/judging/judges/new/", form(fake_openai_server)).content.decode()
    assert "The call failed" in page
    assert "auth (HTTP 401): Incorrect API key provided" in page
    assert fake_openai_server.request_count == 1  # one attempt, no retries


def test_an_address_the_policy_refuses_is_not_called(client, demo, settings, fake_openai_server):
    settings.DISCERN_EGRESS_ALLOW = []
    client.force_login(demo.owner)
    page = client.post("/judging/judges/new/", form(fake_openai_server)).content.decode()
    assert "refused by the egress policy" in page and "Connected" not in page
    assert fake_openai_server.request_count == 0


def test_the_api_tests_a_connection(api_client, demo, fake_openai_server):
    fake_openai_server.reply = lambda request: "Rating: 3"
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=demo.owner)}")
    body = {"base_url": fake_openai_server.base_url, "model": "judge-model"}
    answer = api_client.post("/api/v1/judges/test-connection/", body, format="json")
    assert answer.status_code == 200, answer.json()
    result = answer.json()
    assert result["ok"] and result["reply"] == "Rating: 3" and result["score"] == 3.0
    assert result["latency_s"] > 0 and result["messages"][-1]["role"] == "user"
    missing = api_client.post("/api/v1/judges/test-connection/", {"model": "m"}, format="json")
    assert missing.status_code == 400 and "base_url" in missing.json()
    assert not Judge.objects.filter(created_by=demo.owner).exists()
