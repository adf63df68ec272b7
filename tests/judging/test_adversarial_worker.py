"""Adversarial searches in real Celery workers: one runs to its end, and one whose worker is
killed with SIGKILL mid-search finishes after a restart without asking any call twice."""

from __future__ import annotations

import os
import signal
import time
from types import SimpleNamespace

import pytest
from django.urls import reverse

from apps.analysis.reports import adversarial
from apps.analysis.reports.adversarial import search_outcome
from apps.judging.models import AdversarialSearch, JudgeCall, SearchItem, SearchIteration
from tests.judging.scripted_search import scripted_reply, scripted_world
from tests.judging.test_worker import (
    empty_rate_window,
    fill_rate_window,
    own_worker,
    wait_for,
)

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def finished(search_id: int):
    return lambda: AdversarialSearch.objects.get(pk=search_id).finished


def test_a_search_runs_in_the_worker(celery_worker, demo, fake_openai_server):
    world = scripted_world(demo, fake_openai_server, items=2)
    search = world.create(start=True, target_score=50, rule_baseline=True)
    wait_for(finished(search.pk), what="the search")
    search.refresh_from_db()
    assert search.status == "done", search.error
    items = SearchItem.objects.filter(search=search)
    assert items.count() == 4 and set(items.values_list("status", flat=True)) == {"done"}
    assert {i.stop_reason for i in items.filter(method="adveval")} == {"target"}
    assert search.claimed_by == "" and search.started_at and search.finished_at
    # level 3 reached at the third iteration: 3 generator replies an item, each with candidates
    outcome = search_outcome(search)
    assert (outcome.items, outcome.items_with_result, outcome.has_result) == (2, 2, True)
    assert (outcome.generator_calls, outcome.generator_unparsed, outcome.generator_failed) == (
        6,
        0,
        0,
    )
    assert (outcome.no_result_reason, outcome.note) == ("", "")
    adveval = items.filter(method="adveval").order_by("id")
    assert outcome.generator_call_units() == {
        ("generator", item.pk, number, 0): 0.0 for item in adveval for number in (1, 2, 3)
    }


def stubborn(request):
    """A generator that never writes a <RES> block (nor after the format reminder)."""
    if request.get("model") == "generator-model":
        return "I will not use tags."
    return scripted_reply(request)


def test_a_search_whose_generator_never_writes_a_candidate_has_no_result(
    celery_worker, demo, fake_openai_server, client, api_client
):
    """2 items, 3 iterations each; every generator call is asked again with the format
    reminder and neither reply holds a candidate: 12 replies, all unreadable. The page, the
    API, the report and the audit card's counts all say "no result", never a rate of 0."""
    world = scripted_world(demo, fake_openai_server, items=2)
    world.server.reply = stubborn
    demo.datasets.add(world.dataset)
    search = world.create(start=True, study=demo, max_iterations=3, rule_baseline=False)
    wait_for(finished(search.pk), what="the search")
    search.refresh_from_db()
    assert search.status == "done", search.error

    outcome = search_outcome(search)
    assert (outcome.items, outcome.items_with_result, outcome.has_result) == (2, 0, False)
    assert (outcome.generator_calls, outcome.generator_unparsed, outcome.generator_failed) == (
        12,
        12,
        0,
    )
    assert outcome.no_result_reason == (
        "No result: none of the 2 items produced a scored candidate: 12 of 12 generator "
        "replies held no candidate (6 calls, 6 format retries)."
    )
    assert outcome.note.startswith("AdvEval (LLM generator): 2 of 2 items ended with no result")
    items = SearchItem.objects.filter(search=search).order_by("id")
    assert outcome.generator_call_units() == {
        ("generator", item.pk, number, index): 1.0
        for item in items
        for number in (1, 2, 3)
        for index in (0, 1)
    }

    client.force_login(world.owner)
    html = client.get(reverse("judging-search-detail", args=[search.pk])).content.decode()
    assert 'id="generator-unparsed">12 of 12<' in html
    assert "No result</strong>: 6 of 6 generator replies held no candidate" in html
    assert html.count("I will not use tags.") == 6  # the first item's 3 replies and 3 retries

    api_client.force_authenticate(world.owner)
    shown = api_client.get(f"/api/v1/adversarial-searches/{search.pk}/items/").json()
    assert {(i["has_result"], i["success"], i["generator_unparsed"]) for i in shown} == {
        (False, None, 6)
    }

    (asr,) = [
        dict(zip(t.columns, row, strict=True))
        for t in adversarial.build(demo).tables()
        if t.name == "attack_success"
        for row in t.rows
    ]
    assert (asr["asr"], asr["n_with_result"], asr["items_no_result"]) == (None, 0, 2)


def stored_requests(search) -> int:
    """HTTP requests whose replies are stored: judge calls and generator calls not cached."""
    runs = [j.run_id for j in search.judges.all()]
    calls = JudgeCall.objects.filter(run_id__in=runs, cached=False).exclude(parse_status="pending")
    generator = SearchIteration.objects.filter(
        search_item__search=search, number__gt=0, cached=False
    ).exclude(parse_status="")
    return calls.count() + generator.count()


def quiet(server, search):
    """Nothing on the wire, every reply stored, and it stays so for a moment."""

    def check() -> bool:
        sent = server.request_count
        if server.in_flight or stored_requests(search) != sent:
            return False
        time.sleep(0.3)
        return server.in_flight == 0 and server.request_count == sent == stored_requests(search)

    return check


def test_a_worker_killed_mid_search_and_restarted_finishes_asking_nothing_twice(
    demo,
    fake_openai_server,
    own_queue,
):
    queue, node = own_queue
    fake_openai_server.latency = 0.05
    world = scripted_world(demo, fake_openai_server, items=3)
    limited = (world.generator, world.gold.endpoint, world.victim.endpoint)
    for endpoint in limited:
        endpoint.requests_per_minute = 5000
        endpoint.save()
    windows = [SimpleNamespace(endpoint=endpoint) for endpoint in limited]
    with own_worker(queue, node, "search-worker-killed.log") as first:
        search = world.create(start=True, target_score=1000, max_iterations=5)
        wait_for(
            lambda: SearchIteration.objects.filter(
                search_item__search=search, number=2, status="scored"
            ).exists(),
            what="two iterations of an item",
        )
        for window in windows:
            fill_rate_window(window)
        wait_for(quiet(fake_openai_server, search), what="a quiet moment")
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(10)
        for window in windows:
            empty_rate_window(window)
    search.refresh_from_db()
    before = fake_openai_server.request_count
    assert search.status == "running" and search.claimed_by.startswith(f"{node}/")
    assert SearchItem.objects.filter(search=search, status="running").exists()

    with own_worker(queue, node, "search-worker-restarted.log"):
        wait_for(finished(search.pk), timeout=180, what="the search to finish after the restart")
    search.refresh_from_db()
    assert search.status == "done", search.error
    items = SearchItem.objects.filter(search=search)
    assert {(i.stop_reason, i.iterations) for i in items} == {("iterations", 5)}
    bodies = [request.body for request in fake_openai_server.requests]
    assert fake_openai_server.request_count > before
    assert len(bodies) == len(set(bodies)) == stored_requests(search)  # nothing asked twice
    # 3 items: 5 generator calls each; R0 and 10 candidates judged by 8 gold samples + victim
    assert len(bodies) == 3 * 5 + 3 * 11 * (8 + 1)
    search_runs = [j.run for j in search.judges.all()]
    assert all(run.status == "done" and run.done == run.total for run in search_runs)
