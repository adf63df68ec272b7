"""LLM generation in real Celery workers keeps its endpoint's limits: requests per minute and
requests in flight, counted by the fake server, over two jobs running at once in two worker
processes on the same endpoint (docs/endpoints.md, Limits)."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from apps.catalog.models import PerturbationKind
from apps.corpus.generation.jobs import generation_job_start
from apps.corpus.models import GenerationJob
from apps.endpoints.models import Endpoint
from tests.factories import DatasetFactory, SourceItemFactory, UserFactory
from tests.fakes.fixtures import fake_openai_server as fake_openai_server  # the shared fixture

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]
MINUTE = 60.0


def rewrite(request) -> str:
    return "<perturbed>The bridge stayed closed.</perturbed>\n<explanation>Negated.</explanation>"


def wait_for(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def two_jobs(endpoint: Endpoint, items: tuple[int, int]) -> list[GenerationJob]:
    """Two generation jobs on the same endpoint, started at once (the worker has two
    processes: they run side by side)."""
    owner = UserFactory(role="researcher")
    negation = PerturbationKind.objects.filter(slug="negation")
    jobs = []
    for n, count in enumerate(items):
        dataset = DatasetFactory(owner=owner)
        for i in range(count):
            SourceItemFactory(
                dataset=dataset, external_id=f"d{n}-{i}", original=f"Text {n}-{i}: it opened."
            )
        jobs.append(
            generation_job_start(dataset=dataset, kinds=negation, user=owner, generator=endpoint)
        )
    return jobs


def all_done(jobs: list[GenerationJob]) -> Callable[[], bool]:
    ids = [job.pk for job in jobs]
    return lambda: all(
        status == GenerationJob.Status.DONE
        for status in GenerationJob.objects.filter(pk__in=ids).values_list("status", flat=True)
    )


def most_in_any_minute(times: list[float]) -> int:
    """The most requests received within any 60 seconds, [t, t + 60)."""
    times = sorted(times)
    return max(sum(1 for u in times if t <= u < t + MINUTE) for t in times)


def test_generation_never_exceeds_the_requests_per_minute_over_workers(
    celery_worker, catalog, fake_openai_server
):
    """6 a minute, 9 calls in two jobs: 6 go at once, the other 3 a minute after the first."""
    fake_openai_server.reply = rewrite
    fake_openai_server.latency = 0.2
    endpoint = Endpoint.objects.create(
        name="rate-limited writer",
        base_url=fake_openai_server.base_url,
        model="writer",
        max_concurrency=4,
        requests_per_minute=6,
    )
    started = time.monotonic()
    jobs = two_jobs(endpoint, (5, 4))
    wait_for(all_done(jobs), timeout=150, what="both jobs")
    received = [r.received_at for r in fake_openai_server.requests]
    assert len(received) == 9
    assert most_in_any_minute(received) == 6  # never more, as the server counts
    assert max(received) - min(received) >= MINUTE - 1.0  # the limit held the last three back
    assert fake_openai_server.max_in_flight <= 4
    assert time.monotonic() - started < 120
    counts = GenerationJob.objects.filter(pk__in=[j.pk for j in jobs]).values_list(
        "counts", flat=True
    )
    assert sum(c.get("created", 0) for c in counts) == 9


def test_generation_never_exceeds_the_concurrency_over_workers(
    celery_worker, catalog, fake_openai_server
):
    fake_openai_server.reply = rewrite
    fake_openai_server.latency = 0.3
    endpoint = Endpoint.objects.create(
        name="narrow writer",
        base_url=fake_openai_server.base_url,
        model="writer",
        max_concurrency=2,
    )
    jobs = two_jobs(endpoint, (6, 6))
    wait_for(all_done(jobs), timeout=60, what="both jobs")
    assert fake_openai_server.request_count == 12
    assert fake_openai_server.max_in_flight == 2  # the limit binds, and is never exceeded
