"""Nobody spends by surprise: an adversarial search set up on the page or the API shows its
calls, requests (at most), tokens and cost before it starts, sends nothing until Start, asks
to be confirmed above the limit, and its estimate bounds what it then sends."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from django.urls import reverse

from apps.judging.models import AdversarialSearch, Judge, JudgeRun
from apps.judging.services import adversarial_search_work
from tests.judging.conftest import strategy
from tests.judging.scripted_search import scripted_world

pytestmark = pytest.mark.django_db


class Queued(list):
    """The searches queued for a worker (worked here instead); ``post`` sends a request and
    runs what it left for the commit (the test's transaction never commits)."""

    def __init__(self, capture) -> None:
        super().__init__()
        self.capture = capture

    def post(self, client, url, data=None, **kwargs):
        with self.capture(execute=True):
            return client.post(url, data or {}, **kwargs)


@pytest.fixture
def queued(monkeypatch, django_capture_on_commit_callbacks):
    from workers.tasks import adversarial

    sent = Queued(django_capture_on_commit_callbacks)
    monkeypatch.setattr(adversarial, "queue_search_work", lambda pk, *a, **k: sent.append(pk))
    return sent


@pytest.fixture
def world(demo, fake_openai_server):
    world = scripted_world(demo, fake_openai_server, items=2)
    demo.datasets.add(world.dataset)
    return world


def figure(page: str, name: str) -> int:
    return int(re.search(rf'id="estimate-{name}">([\d,]+)', page).group(1).replace(",", ""))


def form_data(world, **changes):
    """Two items, 4 iterations of 2 candidates, a target S_fb (1000) no text reaches: every
    item runs to its iteration limit, as the estimate's bound assumes."""
    return {
        "dataset": world.dataset.pk,
        "direction": "R+",
        "generator": world.generator.pk,
        "victim": world.victim.pk,
        "victim_strategy": strategy("adveval-0-100").pk,
        "gold": [world.gold.pk],
        "gold_strategy": strategy("adveval-gold-0-100").pk,
        "criterion": world.criterion.pk,
        "criterion_in_prompt": "on",
        "alpha": 1,
        "target_score": 1000,
        "max_iterations": 4,
        "query_budget": 300,
        "candidates_per_iteration": 2,
        "generator_temperature": 1,
        "tau2": 40,
        "label": "estimated",
    } | changes


def new_search_page(client, world, **changes):
    response = client.post(reverse("judging-search-new"), form_data(world, **changes))
    assert response.status_code == 302, response.content.decode()[:2000]
    return AdversarialSearch.objects.latest("pk"), client.get(response["Location"]).content.decode()


def test_a_search_shows_its_estimate_and_sends_nothing_until_started(
    client, world, fake_openai_server, queued
):
    client.force_login(world.owner)
    search, page = new_search_page(client, world)
    # per item R0 and 4 x 2 candidates: the victim 9 calls, the gold 9 x 8 samples; the
    # generator 4 asks, each perhaps asked again with the format reminder (8 requests)
    assert search.status == "pending" and "Before it starts" in page
    assert figure(page, "calls") == 2 * (9 + 72 + 4) == 170
    assert figure(page, "http") == 2 * (9 + 72 + 8) == 178 and figure(page, "cached") == 0
    assert "upper bounds</strong> from its limits" in page and "HTTP requests, at most" in page
    assert figure(page, "prompt") == 178 * 500 and figure(page, "completion") > 0
    assert 'id="search-status" class="status-pending">not started<' in page
    assert fake_openai_server.request_count == 0 and queued == []
    estimated = figure(page, "http")
    assert queued.post(client, reverse("judging-search-start", args=[search.pk])).status_code == 302
    search.refresh_from_db()
    assert search.status == "running" and queued == [search.pk]
    assert fake_openai_server.request_count == 0  # queued for the worker, nothing sent here
    adversarial_search_work(search_id=search.pk)
    search.refresh_from_db()
    assert search.status == "done", search.error
    assert {i.stop_reason for i in search.items.all()} == {"iterations"}  # its limits reached
    sent = fake_openai_server.request_count
    assert sent <= estimated and sent >= 0.75 * estimated, (sent, estimated)
    assert sent == 170  # no format retry was needed: 8 generator requests fewer than the bound
    # the same search again replays from the cache: the estimate says so, and nothing is sent
    again, page = new_search_page(client, world, label="again")
    assert figure(page, "cached") == figure(page, "calls") == 170 and figure(page, "http") == 0
    assert f"it replays search {search.pk} from the cache" in page
    client.post(reverse("judging-search-start", args=[again.pk]))
    adversarial_search_work(search_id=again.pk)
    again.refresh_from_db()
    assert again.status == "done" and fake_openai_server.request_count == sent


def test_above_the_studys_limit_it_starts_only_when_confirmed(
    client, demo, world, fake_openai_server, queued
):
    demo.confirm_above_requests = 50
    demo.save()
    client.force_login(world.owner)
    search, page = new_search_page(client, world, study=demo.pk)
    assert (
        "I confirm up to 178 requests to victim-model, gold-model, generator-model, above this "
        "study's limit of 50" in page
    )
    url = reverse("judging-search-start", args=[search.pk])
    refused = queued.post(client, url)
    assert refused.status_code == 400
    assert (
        "would send up to 178 requests to the models, above the limit of 50"
        in refused.content.decode()
    )
    assert AdversarialSearch.objects.get(pk=search.pk).status == "pending"
    # resume does not start it either: it starts from its estimate
    client.post(reverse("judging-search-resume", args=[search.pk]))
    assert AdversarialSearch.objects.get(pk=search.pk).status == "pending"
    queued.post(client, url, {"confirm": "1"})
    assert AdversarialSearch.objects.get(pk=search.pk).status == "running"
    assert fake_openai_server.request_count == 0 and queued == [search.pk]
    # started: no second start
    assert queued.post(client, url, {"confirm": "1"}).status_code == 400
    assert queued == [search.pk]


def test_without_a_study_the_servers_limit_applies(client, world, settings, queued):
    settings.DISCERN_CONFIRM_ABOVE_REQUESTS = 100
    client.force_login(world.owner)
    search, page = new_search_page(client, world)
    assert "above the limit of 100" in page
    assert client.post(reverse("judging-search-start", args=[search.pk])).status_code == 400
    assert queued == []


def test_the_cost_counts_the_judges_with_prices(client, world, queued):
    Judge.objects.filter(pk__in=[world.victim.pk, world.gold.pk]).update(
        price_per_million_prompt_tokens=Decimal(1000),
        price_per_million_completion_tokens=Decimal(2000),
    )
    client.force_login(world.owner)
    _search, page = new_search_page(client, world)
    cost = page.split('id="estimate-cost">', 1)[1].split("</dd>", 1)[0]
    # 162 judge requests of 500 prompt tokens and 8 completion tokens (max_tokens)
    assert cost.startswith(f"{(162 * 500 * 1 + 162 * 8 * 2) / 1000:.4f}")
    assert "without generator generator: no prices" in cost
    # the generator is priced by the LLM judge of its endpoint, when that judge has prices
    Judge.objects.filter(endpoint=world.generator).update(
        price_per_million_prompt_tokens=Decimal(1000)
    )
    _search, page = new_search_page(client, world)
    cost = page.split('id="estimate-cost">', 1)[1].split("</dd>", 1)[0]
    assert cost == f"{(162 * 500 + 162 * 8 * 2 + 16 * 500) / 1000:.4f}"


def api_body(world, **changes):
    return {
        "dataset": world.dataset.pk,
        "direction": "R+",
        "generator": world.generator.name,
        "victim": {"judge": world.victim.pk, "strategy": strategy("adveval-0-100").pk},
        "gold": [{"judge": world.gold.pk, "strategy": strategy("adveval-gold-0-100").pk}],
        "criterion": world.criterion.pk,
        "target_score": 1000,
        "max_iterations": 4,
        "candidates_per_iteration": 2,
        "rule_baseline": False,
    } | changes


def test_the_api_estimates_on_a_dry_run_and_asks_to_confirm_above_the_limit(
    api_client, demo, world, fake_openai_server, queued
):
    api_client.force_authenticate(world.owner)
    url = "/api/v1/adversarial-searches/"
    body = api_body(world, study=demo.pk)
    dry = api_client.post(url, body | {"dry_run": True}, format="json")
    assert dry.status_code == 200, dry.json()
    assert not AdversarialSearch.objects.exists() and not JudgeRun.objects.exists()
    estimate = dry.json()["estimate"]
    assert (estimate["calls"], estimate["http_calls"], estimate["limit"]) == (170, 178, 500)
    assert estimate["upper_bound"] and not estimate["over_limit"]
    assert [(r["role"], r["http_calls"]) for r in estimate["roles"]] == [
        ("victim", 18),
        ("gold", 144),
        ("generator", 16),
    ]
    demo.confirm_above_requests = 100
    demo.save()
    refused = api_client.post(url, body, format="json")
    assert refused.status_code == 400
    assert (
        "up to 178 requests to the models, above the limit of 100" in refused.json()["confirm"][0]
    )
    assert refused.json()["estimate"]["over_limit"] and not AdversarialSearch.objects.exists()
    started = queued.post(api_client, url, body | {"confirm": True}, format="json")
    assert started.status_code == 201 and started.json()["status"] == "running"
    assert started.json()["estimate"]["http_calls"] == 178
    assert fake_openai_server.request_count == 0 and queued == [started.json()["id"]]


def test_the_api_estimates_and_starts_a_search_not_started(
    api_client, world, fake_openai_server, queued
):
    """A search set up on the page is started from the API (its own estimate and start)."""
    search = world.create(target_score=1000, max_iterations=4)
    api_client.force_authenticate(world.owner)
    base = f"/api/v1/adversarial-searches/{search.pk}"
    estimate = api_client.get(f"{base}/estimate/").json()
    assert estimate["http_calls"] == 178 and estimate["basis"].startswith("upper bound")
    assert api_client.post(f"{base}/resume/").status_code == 400  # it starts from its estimate
    started = queued.post(api_client, f"{base}/start/", {"confirm": True}, format="json")
    assert started.status_code == 200 and started.json()["status"] == "running"
    assert api_client.post(f"{base}/start/").status_code == 400  # running already
    assert queued == [search.pk] and fake_openai_server.request_count == 0


def test_a_search_cancelled_before_it_started_still_starts_from_its_estimate(
    api_client, world, queued
):
    search = world.create()
    api_client.force_authenticate(world.owner)
    base = f"/api/v1/adversarial-searches/{search.pk}"
    assert api_client.post(f"{base}/cancel/").json()["status"] == "cancelled"
    assert api_client.post(f"{base}/resume/").status_code == 400 and queued == []
    assert api_client.get(f"{base}/estimate/").json()["calls"] > 0


def test_an_audits_search_starts_with_its_audit(client, demo, fake_openai_server, queued):
    from apps.judging.audit_selectors import audit_parts
    from apps.judging.services.audits import audit_plan
    from tests.judging.conftest import llm_judge

    demo.vetted_only_default = False
    demo.save()
    judge = llm_judge(fake_openai_server, model="victim-model")
    gold = llm_judge(fake_openai_server, name="gold", model="gold-model")
    generator = llm_judge(fake_openai_server, name="generator", model="generator-model")
    audit = audit_plan(
        owner=demo.owner,
        study=demo,
        subjects=[(judge, strategy("adveval-0-100"))],
        search_budget=5,
        generator=generator.endpoint,
        gold_judge=gold,
    )
    search = next(p.search for p in audit_parts(audit) if p.search)
    client.force_login(demo.owner)
    page = client.get(reverse("judging-search-detail", args=[search.pk])).content.decode()
    assert f'Part of <a href="/judging/audits/{audit.pk}/">audit {audit.pk}</a>' in page
    assert "Start the search" not in page
    refused = queued.post(client, reverse("judging-search-start", args=[search.pk]))
    assert refused.status_code == 400 and f"part of audit {audit.pk}" in refused.content.decode()
    assert queued == [] and fake_openai_server.request_count == 0
