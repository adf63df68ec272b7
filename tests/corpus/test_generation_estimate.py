"""Nobody spends by surprise: an LLM generation shows calls, requests and tokens before it
starts, asks to be confirmed above the study's limit, and its estimate matches what it then
sends to the (fake, real HTTP) generator; rule-based generation starts at once as before."""

from __future__ import annotations

import re

import pytest
from rest_framework.authtoken.models import Token

from apps.catalog.models import PerturbationKind
from apps.corpus.generation.jobs import generation_job_run
from apps.corpus.models import GenerationJob, Perturbation
from apps.endpoints.models import Endpoint
from tests.factories import DatasetFactory, SourceItemFactory, StudyFactory
from tests.fakes.fixtures import fake_openai_server as fake_openai_server
from tests.fakes.openai_server import FakeOpenAIServer

pytestmark = pytest.mark.django_db
ITEMS = 25
KINDS = ("negation", "passive-voice")  # LLM-written: 25 × 2 = 50 calls


def rewrite(request) -> str:
    """A usable reply for any item: its text, with a sentence added."""
    last = request["messages"][-1]["content"]
    original = last.split("<original>\n", 1)[1].split("\n</original>", 1)[0]
    return f"<perturbed>{original} It was not so.</perturbed>\n<explanation>Added.</explanation>"


@pytest.fixture
def writer(fake_openai_server: FakeOpenAIServer, researcher, catalog) -> Endpoint:
    fake_openai_server.reply = rewrite
    return Endpoint.objects.create(
        name="writer",
        owner=researcher,
        base_url=fake_openai_server.base_url,
        model="fake-writer",
        max_concurrency=8,
    )


@pytest.fixture
def dataset(researcher):
    dataset = DatasetFactory(owner=researcher)
    for n in range(ITEMS):
        SourceItemFactory(
            dataset=dataset,
            external_id=f"g{n}",
            original=f"Report {n}: the council met on day {n} and approved {n + 3} new bridges.",
        )
    return dataset


def figure(page: str, name: str) -> int:
    return int(re.search(rf'id="estimate-{name}">([\d,]+)<', page).group(1).replace(",", ""))


def new_job_page(client, dataset, writer, **fields) -> tuple[GenerationJob, str]:
    form = {
        "dataset": dataset.pk,
        "kinds": [k.pk for k in PerturbationKind.objects.filter(slug__in=KINDS)],
        "generator": writer.pk,
        "temperature": 0.7,
        "max_tokens": 300,
        "seed": 0,
    } | fields
    response = client.post("/generate/", form)
    assert response.status_code == 302, response.content.decode()[:2000]
    job = GenerationJob.objects.latest("pk")
    return job, client.get(response["Location"]).content.decode()


def sent_prompt_chars(server: FakeOpenAIServer) -> int:
    return sum(len(m["content"]) for r in server.requests for m in r.json["messages"])


def test_an_llm_generation_shows_its_estimate_and_sends_nothing_until_started(
    client, researcher, dataset, writer, fake_openai_server
):
    client.force_login(researcher)
    job, page = new_job_page(client, dataset, writer)
    assert not job.started and "Before it starts" in page and "not started" in page
    assert figure(page, "calls") == 50 and figure(page, "http") == 50
    assert figure(page, "already-there") == 0 and figure(page, "completion") == 50 * 300
    assert "Start the generation" in page and "no prices" in page and "I confirm" not in page
    estimated, prompt_tokens = figure(page, "http"), figure(page, "prompt")
    generation_job_run(job_id=job.pk)  # a worker handed a job not started runs nothing
    assert fake_openai_server.request_count == 0 and not Perturbation.objects.exists()
    assert client.post(f"/generate/{job.pk}/start/").status_code == 302
    job.refresh_from_db()
    assert (
        job.started
        and "Before it starts" not in client.get(f"/generate/{job.pk}/").content.decode()
    )
    generation_job_run(job_id=job.pk)  # what the worker does
    sent = fake_openai_server.request_count
    assert abs(sent - estimated) <= 0.25 * estimated, (sent, estimated)
    assert sent_prompt_chars(fake_openai_server) // 4 == prompt_tokens
    job.refresh_from_db()
    assert Perturbation.objects.filter(origin="llm").count() == 50, (job.counts, job.problems[:2])
    # the same generation again: every pair is already there, and the estimate says so
    again, page = new_job_page(client, dataset, writer)
    assert figure(page, "already-there") == 50 and figure(page, "http") == 0
    client.post(f"/generate/{again.pk}/start/")
    generation_job_run(job_id=again.pk)
    assert fake_openai_server.request_count == sent


def test_above_the_studys_limit_it_starts_only_when_confirmed(
    client, researcher, dataset, writer, fake_openai_server
):
    study = StudyFactory(owner=researcher, confirm_above_requests=20)
    client.force_login(researcher)
    job, page = new_job_page(client, dataset, writer, study=study.pk)
    assert "I confirm 50 requests to fake-writer, above this study&#x27;s limit of 20" in page
    refused = client.post(f"/generate/{job.pk}/start/")
    assert refused.status_code == 400
    assert "would send 50 requests to the model, above the limit of 20" in refused.content.decode()
    assert not GenerationJob.objects.get(pk=job.pk).started
    assert client.post(f"/generate/{job.pk}/start/", {"confirm": "1"}).status_code == 302
    assert GenerationJob.objects.get(pk=job.pk).started
    assert fake_openai_server.request_count == 0  # queued for the worker, nothing sent here


def test_without_a_study_the_servers_limit_holds(
    client, researcher, dataset, writer, settings, fake_openai_server
):
    settings.DISCERN_CONFIRM_ABOVE_REQUESTS = 40
    client.force_login(researcher)
    job, page = new_job_page(client, dataset, writer)
    assert "I confirm 50 requests to fake-writer, above the limit of 40" in page
    assert client.post(f"/generate/{job.pk}/start/").status_code == 400


def test_the_api_estimates_on_a_dry_run_and_asks_to_confirm_above_the_limit(
    api_client, researcher, dataset, writer, fake_openai_server
):
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=researcher)}")
    study = StudyFactory(owner=researcher)
    body = {
        "dataset": dataset.pk,
        "kinds": list(KINDS),
        "generator": "writer",
        "max_tokens": 300,
        "study": study.pk,
    }
    dry = api_client.post("/api/v1/generation-jobs/", body | {"dry_run": True}, format="json")
    assert dry.status_code == 200 and not GenerationJob.objects.exists()
    estimate = dry.json()["estimate"]
    assert estimate["calls"] == estimate["http_calls"] == 50 and estimate["limit"] == 500
    assert estimate["cost"] is None and not estimate["over_limit"]
    assert estimate["completion_tokens"] == 50 * 300 and estimate["model"] == "fake-writer"
    study.confirm_above_requests = 30
    study.save()
    refused = api_client.post("/api/v1/generation-jobs/", body, format="json")
    assert refused.status_code == 400 and "above the limit of 30" in refused.json()["confirm"][0]
    assert refused.json()["estimate"]["over_limit"] and not GenerationJob.objects.exists()
    started = api_client.post("/api/v1/generation-jobs/", body | {"confirm": True}, format="json")
    assert started.status_code == 201 and started.json()["started"]
    assert started.json()["estimate"]["http_calls"] == 50
    assert fake_openai_server.request_count == 0


def test_the_api_starts_a_job_recorded_on_the_page(
    client, api_client, researcher, dataset, writer, fake_openai_server
):
    client.force_login(researcher)
    job, _ = new_job_page(client, dataset, writer)
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=researcher)}")
    estimate = api_client.get(f"/api/v1/generation-jobs/{job.pk}/estimate/").json()
    assert estimate["http_calls"] == 50
    started = api_client.post(f"/api/v1/generation-jobs/{job.pk}/start/", format="json")
    assert started.status_code == 200 and started.json()["started"]
    again = api_client.post(f"/api/v1/generation-jobs/{job.pk}/start/", format="json")
    assert again.status_code == 400 and "has started already" in again.json()["job"][0]


def test_rule_generation_starts_at_once(client, api_client, researcher, dataset, catalog):
    rule = PerturbationKind.objects.get(slug="word-exchange")
    client.force_login(researcher)
    form = {"dataset": dataset.pk, "kinds": [rule.pk], "seed": 0, "temperature": 0.7}
    response = client.post("/generate/", form | {"max_tokens": 512})
    job = GenerationJob.objects.get()
    assert (
        job.started and "Before it starts" not in client.get(response["Location"]).content.decode()
    )
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=researcher)}")
    made = api_client.post(
        "/api/v1/generation-jobs/", {"dataset": dataset.pk, "kinds": ["word-exchange"]}, "json"
    )
    assert made.status_code == 201 and made.json()["started"] and "estimate" not in made.json()
