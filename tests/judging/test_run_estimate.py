"""Nobody spends by surprise: an LLM judge's run shows calls, requests, tokens and cost before
it starts, asks to be confirmed above the study's limit, says when it would measure nothing
(with the one click that fixes it), and its estimate matches what it then sends."""

from __future__ import annotations

import re

import pytest
from rest_framework.authtoken.models import Token

from apps.judging.models import Judge, JudgeRun, RunStatus
from tests.judging.conftest import llm_judge, strategy, work

pytestmark = pytest.mark.django_db


@pytest.fixture
def queued(monkeypatch):
    """Runs started from the pages are worked here (``work``), not by a worker."""
    from workers.tasks import judging

    sent: list[int] = []
    monkeypatch.setattr(judging, "queue_run_work", lambda run_id, *a, **k: sent.append(run_id))
    return sent


@pytest.fixture
def judge(fake_openai_server, demo) -> Judge:
    judge = llm_judge(fake_openai_server)
    judge.price_per_million_prompt_tokens = 1000
    judge.price_per_million_completion_tokens = 2000
    judge.save()
    return judge


def figure(page: str, name: str) -> int:
    return int(re.search(rf'id="estimate-{name}">([\d,]+)<', page).group(1).replace(",", ""))


def new_run_page(client, demo, judge, criteria, slug="hu-analyze-rate", **fields):
    form = {
        "judge": judge.pk,
        "strategy": strategy(slug).pk,
        "study": demo.pk,
        "criteria": [c.pk for c in criteria("coherence")],
        "include_originals": "on",
        "include_perturbations": "on",
        "vetted_only": "false",
    } | fields
    response = client.post("/judging/runs/new/", form)
    assert response.status_code == 302, response.content.decode()[:2000]
    run = JudgeRun.objects.latest("pk")
    return run, client.get(response["Location"]).content.decode()


def test_a_run_shows_its_estimate_and_sends_nothing_until_started(
    client, demo, judge, criteria, fake_openai_server, queued
):
    client.force_login(demo.owner)
    run, page = new_run_page(client, demo, judge, criteria)
    # 6 originals + 14 perturbations, one criterion, 10 samples ("Analyze then rate")
    assert run.status == RunStatus.PENDING and figure(page, "calls") == 200
    assert figure(page, "http") == 200 and figure(page, "cached") == 0
    assert "Start the run" in page and figure(page, "prompt") > 0
    assert fake_openai_server.request_count == 0 and queued == []
    estimated = figure(page, "http")
    assert client.post(f"/judging/runs/{run.pk}/start/").status_code == 302
    run.refresh_from_db()
    assert run.status == RunStatus.RUNNING
    work(run)
    sent = fake_openai_server.request_count
    assert abs(sent - estimated) <= 0.25 * estimated, (sent, estimated)
    # the same run again: every call is answered by the cache, and the estimate says so
    client.post(f"/judging/runs/{run.pk}/again/")
    again = JudgeRun.objects.latest("pk")
    page = client.get(f"/judging/runs/{again.pk}/").content.decode()
    assert figure(page, "cached") == 200 and figure(page, "http") == 0
    client.post(f"/judging/runs/{again.pk}/start/")
    work(again)
    assert fake_openai_server.request_count == sent


def test_above_the_studys_limit_it_starts_only_when_confirmed(
    client, demo, judge, criteria, fake_openai_server, queued
):
    demo.confirm_above_requests = 50
    demo.save()
    client.force_login(demo.owner)
    run, page = new_run_page(client, demo, judge, criteria)
    assert "I confirm 200 requests to judge-model, above this study's limit of 50" in page
    refused = client.post(f"/judging/runs/{run.pk}/start/")
    assert refused.status_code == 400
    assert "would send 200 requests to the model, above the limit of 50" in refused.content.decode()
    assert JudgeRun.objects.get(pk=run.pk).status == RunStatus.PENDING
    client.post(f"/judging/runs/{run.pk}/start/", {"confirm": "1"})
    assert JudgeRun.objects.get(pk=run.pk).status == RunStatus.RUNNING
    assert fake_openai_server.request_count == 0  # queued for the worker, nothing sent here


def test_a_run_that_would_measure_nothing_says_so_and_offers_the_fix(
    client, demo, judge, criteria, fake_openai_server, queued
):
    """The demo's perturbations are not vetted: judging vetted ones only, without originals,
    would measure nothing. The page says why and, in one click, takes them all instead."""
    client.force_login(demo.owner)
    form = {"vetted_only": "true", "include_originals": ""}
    run, page = new_run_page(client, demo, judge, criteria, slug="fbi-single-vanilla", **form)
    assert "This run would measure nothing" in page and "14 perturbations not vetted" in page
    assert "Start the run" not in page
    assert client.post(f"/judging/runs/{run.pk}/start/").status_code == 400
    fixed = client.post(f"/judging/runs/{run.pk}/start/", {"vetted_only": "false"})
    again = JudgeRun.objects.latest("pk")
    assert fixed["Location"] == f"/judging/runs/{again.pk}/" and not again.vetted_only
    page = client.get(fixed["Location"]).content.decode()
    assert figure(page, "calls") == 14 and "Start the run" in page
    assert fake_openai_server.request_count == 0


def test_metric_judges_start_at_once(client, demo, queued):
    client.force_login(demo.owner)
    bleu = Judge.objects.get(name="BLEU")
    client.post("/judging/runs/new/", {"judge": bleu.pk, "study": demo.pk, "vetted_only": "false"})
    assert JudgeRun.objects.get().status == RunStatus.RUNNING


def test_the_api_estimates_on_a_dry_run_and_asks_to_confirm_above_the_limit(
    api_client, demo, judge, criteria, fake_openai_server, queued
):
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=demo.owner)}")
    body = {
        "judge": judge.pk,
        "strategy": strategy("hu-analyze-rate").pk,
        "study": demo.pk,
        "criteria": [c.pk for c in criteria("coherence")],
        "vetted_only": False,
    }
    dry = api_client.post("/api/v1/judge-runs/", body | {"dry_run": True}, format="json")
    assert dry.status_code == 200 and not JudgeRun.objects.exists()
    estimate = dry.json()["estimate"]
    assert estimate["calls"] == estimate["http_calls"] == 200 and estimate["limit"] == 500
    assert estimate["cost"] is not None and not estimate["over_limit"]
    demo.confirm_above_requests = 100
    demo.save()
    refused = api_client.post("/api/v1/judge-runs/", body, format="json")
    assert refused.status_code == 400 and "above the limit of 100" in refused.json()["confirm"][0]
    assert refused.json()["estimate"]["over_limit"] and not JudgeRun.objects.exists()
    started = api_client.post("/api/v1/judge-runs/", body | {"confirm": True}, format="json")
    assert started.status_code == 201 and started.json()["status"] == "running"
    assert started.json()["estimate"]["http_calls"] == 200
    assert fake_openai_server.request_count == 0


def test_run_again_from_the_api_is_estimated_too(
    api_client, demo, judge, criteria, fake_openai_server, queued
):
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=demo.owner)}")
    body = {
        "judge": judge.pk,
        "strategy": strategy("fbi-single-vanilla").pk,
        "study": demo.pk,
        "criteria": [c.pk for c in criteria("coherence")],
        "vetted_only": False,
    }
    run = JudgeRun.objects.get(
        pk=api_client.post("/api/v1/judge-runs/", body, format="json").json()["id"]
    )
    work(run)
    again = api_client.post(f"/api/v1/judge-runs/{run.pk}/again/", format="json")
    assert again.status_code == 201 and again.json()["estimate"]["cached_calls"] == 20
    assert again.json()["estimate"]["http_calls"] == 0 and again.json()["status"] == "running"
