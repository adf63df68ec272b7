"""Judge runs in real Celery workers: fan-out under the judge's shared limit, the cache
across runs, and a worker killed with SIGKILL mid-run then restarted."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import limits.storage
import limits.strategies
import pytest
import redis
from django.db import connection

from apps.endpoints.limiter import RATE_WINDOW_S, rate_key
from apps.endpoints.slots import slots_key
from apps.judging.models import JudgeCall, JudgeRun
from apps.judging.services import judge_run_create, judge_run_rerun
from tests.conftest import ARTIFACTS, ROOT, worker_environ
from tests.judging.conftest import llm_judge, strategy

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]
ALL_ASPECTS = (
    "overall",
    "fluency",
    "coherence",
    "faithfulness",
    "informativeness",
    "simplicity",
    "grammaticality",
    "adequacy",
    "readability",
    "non-contradiction",
    "non-hallucination",
)


def wait_for(condition: Callable[[], bool], timeout: float = 60, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what or condition}")


def finished(run_id: int) -> Callable[[], bool]:
    return lambda: JudgeRun.objects.get(pk=run_id).finished


def test_a_run_fans_out_over_workers_without_exceeding_the_judge_limit(
    celery_worker, demo, criteria, fake_openai_server
):
    fake_openai_server.latency = 0.05
    judge = llm_judge(fake_openai_server, max_concurrency=4)
    chosen = criteria(*ALL_ASPECTS)  # 11 criteria x 20 texts: 220 calls, two tasks
    run = judge_run_create(
        user=demo.owner,
        judge=judge,
        strategy=strategy("fbi-single-axis"),
        study=demo,
        criteria=chosen,
        vetted_only=False,
    )
    wait_for(finished(run.pk), what="the run")
    run.refresh_from_db()
    assert (run.status, run.total, run.done, run.failed) == ("done", 220, 220, 0)
    assert fake_openai_server.request_count == 220
    assert fake_openai_server.max_in_flight == 4  # two tasks of 2 slots each; never above 4
    again = judge_run_rerun(run=run, user=demo.owner)
    wait_for(finished(again.pk), what="the second run")
    again.refresh_from_db()
    assert (again.status, again.cached, again.http_requests) == ("done", 220, 0)
    assert fake_openai_server.request_count == 220  # the second run made no HTTP call


def test_one_worker_process_borrows_the_slots_of_the_task_it_cannot_run_yet(
    demo, criteria, fake_openai_server, own_queue
):
    """The run is fanned out to two tasks of 2 slots, but the worker has one process: the
    task it runs borrows the other task's free slots, up to the judge's limit and no more."""
    queue, node = own_queue
    fake_openai_server.latency = 0.05
    judge = llm_judge(fake_openai_server, max_concurrency=4)
    chosen = criteria(*ALL_ASPECTS)  # 11 criteria x 20 texts: 220 calls, two tasks
    with own_worker(queue, node, "judge-worker-one-process.log"):
        run = judge_run_create(
            user=demo.owner,
            judge=judge,
            strategy=strategy("fbi-single-axis"),
            study=demo,
            criteria=chosen,
            vetted_only=False,
        )
        wait_for(finished(run.pk), what="the run")
    run.refresh_from_db()
    assert (run.status, run.total, run.done, run.failed) == ("done", 220, 220, 0)
    assert fake_openai_server.request_count == 220
    assert fake_openai_server.max_in_flight == 4
    assert reserved_slots(judge) == 0  # all given back at the end


@contextmanager
def own_worker(
    queue: str,
    node: str,
    log_name: str,
    env: dict[str, str] | None = None,
    concurrency: int = 1,
    production: bool = False,
    control: Any = None,
) -> Iterator[subprocess.Popen]:
    """A `celery worker` of our own (its own process group, so SIGKILL takes it whole);
    ``production``: with gossip and mingle, as docs/deployment.md starts it; ``control``: the
    Celery app that pings it (the suite's by default)."""
    from workers.celery import app as suite_app

    app = control or suite_app

    db = connection.settings_dict
    env = {
        **worker_environ(),
        "DISCERN_QUEUE": queue,
        "DATABASE_URL": f"postgres://{db['USER']}:{db['PASSWORD']}@{db['HOST']}:{db['PORT']}/"
        f"{db['NAME']}",
        **(env or {}),
    }
    ARTIFACTS.mkdir(exist_ok=True)
    with (ARTIFACTS / log_name).open("w") as log:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "workers",
                "worker",
                "-Q",
                queue,
                "-n",
                node,
                f"--concurrency={concurrency}",
                "--loglevel=INFO",
                *([] if production else ["--without-gossip", "--without-mingle"]),
            ],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            wait_for(
                lambda: (
                    bool(app.control.ping(destination=[node], timeout=0.5))
                    or process.poll() is not None
                ),
                what="the worker to answer",
            )
            assert process.poll() is None, f"worker exited; see {ARTIFACTS / log_name}"
            yield process
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
                process.wait(20)


def _rate_window(judge):
    """The judge's shared requests-per-minute window, through the library's own storage."""
    endpoint = judge.endpoint
    storage = limits.storage.RedisStorage(os.environ["REDIS_URL"])
    item = limits.RateLimitItemPerSecond(endpoint.requests_per_minute, RATE_WINDOW_S)
    return limits.strategies.MovingWindowRateLimiter(storage), item, rate_key(endpoint.limit_key)


def fill_rate_window(judge) -> None:
    """Fill the judge's shared requests-per-minute window: every next request waits (about a
    minute) before it is sent, while those already on the wire finish and are stored."""
    window, item, key = _rate_window(judge)
    window.clear(item, key)
    window.hit(item, key, cost=item.amount)


def empty_rate_window(judge) -> None:
    window, item, key = _rate_window(judge)
    window.clear(item, key)


def reserved_slots(judge) -> int:
    client = redis.Redis.from_url(os.environ["REDIS_URL"])
    held = int(client.zcard(slots_key(judge.endpoint.limit_key)))
    client.close()
    return held


def quiet(server, run) -> Callable[[], bool]:
    """Nothing on the wire, every reply stored, and it stays so for a moment."""

    def stored() -> int:
        return JudgeCall.objects.filter(run=run).exclude(parse_status="pending").count()

    def check() -> bool:
        sent = server.request_count
        if server.in_flight or stored() != sent:
            return False
        time.sleep(0.3)
        return server.in_flight == 0 and server.request_count == sent == stored()

    return check


def test_a_worker_killed_mid_run_and_restarted_finishes_without_lost_or_repeated_calls(
    demo, criteria, fake_openai_server, own_queue
):
    queue, node = own_queue
    fake_openai_server.latency = 0.1
    judge = llm_judge(fake_openai_server, max_concurrency=3, requests_per_minute=5000)
    chosen = criteria(
        "overall", "fluency", "coherence", "faithfulness", "informativeness", "simplicity"
    )
    with own_worker(queue, node, "judge-worker-killed.log") as first:
        run = judge_run_create(
            user=demo.owner,
            judge=judge,
            strategy=strategy("fbi-single-axis"),
            study=demo,
            criteria=chosen,
            vetted_only=False,
        )
        wait_for(lambda: JudgeRun.objects.get(pk=run.pk).done >= 20, what="20 calls")
        fill_rate_window(judge)
        wait_for(quiet(fake_openai_server, run), what="a quiet moment")
        os.killpg(first.pid, signal.SIGKILL)  # the whole worker, children included
        first.wait(10)
        empty_rate_window(judge)
    run.refresh_from_db()
    before = fake_openai_server.request_count
    assert run.status == "running" and 20 <= run.done < run.total == 120
    held = JudgeCall.objects.filter(
        run=run, parse_status="pending", claimed_by__startswith=f"{node}/"
    )
    assert held.exists()  # the dead worker's leases are still there,
    assert reserved_slots(judge) == 3  # and so are its reserved slots

    with own_worker(queue, node, "judge-worker-restarted.log"):
        wait_for(finished(run.pk), what="the run to finish after the restart")
    run.refresh_from_db()
    assert (run.status, run.done, run.failed, run.cached) == ("done", 120, 0, 0)
    assert JudgeCall.objects.filter(run=run).count() == 120
    bodies = [request.body for request in fake_openai_server.requests]
    assert fake_openai_server.request_count == len(set(bodies)) == 120 > before
    assert run.http_requests == 120


def test_a_worker_killed_with_requests_on_the_wire_loses_no_call(
    demo, criteria, fake_openai_server, own_queue
):
    """Killed while requests are out: their replies never reach us, nor do replies received in
    the last 50 ms and not yet stored, so those calls are asked again (a few: the judge's
    concurrency plus one flush interval's worth); every other call is asked once, none lost."""
    queue, node = own_queue
    fake_openai_server.latency = 0.1
    judge = llm_judge(fake_openai_server, max_concurrency=3)
    chosen = criteria("overall", "fluency", "coherence")
    with own_worker(queue, node, "judge-worker-killed-on-the-wire.log") as first:
        run = judge_run_create(
            user=demo.owner,
            judge=judge,
            strategy=strategy("fbi-single-axis"),
            study=demo,
            criteria=chosen,
            vetted_only=False,
        )
        wait_for(
            lambda: JudgeRun.objects.get(pk=run.pk).done >= 10 and fake_openai_server.in_flight > 0,
            what="calls on the wire",
        )
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(10)
    with own_worker(queue, node, "judge-worker-restarted-on-the-wire.log"):
        wait_for(finished(run.pk), what="the run to finish after the restart")
    run.refresh_from_db()
    assert (run.status, run.done, run.failed) == ("done", 60, 0)
    assert JudgeCall.objects.filter(run=run, parse_status="parsed").count() == 60
    bodies = [request.body for request in fake_openai_server.requests]
    assert len(set(bodies)) == 60  # every call was asked
    assert len(bodies) - 60 <= 2 * 3  # only those on the wire (or just back) asked twice
