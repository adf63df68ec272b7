"""Redis (the broker, the shared limits, the run's request count) restarted in the middle of a
judge run: the worker reconnects, the run finishes with every call asked once, nothing lost,
and the run's request count equals what the model server received; a run whose queued message
went with the restart is picked up again when the worker reconnects."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from celery import Celery
from django.utils import timezone

from apps.judging.models import JudgeCall, JudgeRun
from tests.conftest import ARTIFACTS
from tests.judging.conftest import llm_judge, new_run
from tests.judging.test_worker import ALL_ASPECTS, finished, own_worker, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


class PrivateRedis:
    """A Redis server of this test's own, on a free port, that it stops and starts again
    (empty: it keeps nothing on disk, like the services the suite starts)."""

    def __init__(self, folder: Path) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.folder = folder
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        command = [shutil.which("redis-server") or "redis-server", "--port", str(self.port)]
        command += ["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        command += ["--dir", str(self.folder)]
        log = (ARTIFACTS / "private-redis.log").open("a")
        self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        wait_for(self.answers, timeout=10, what="the private Redis")

    def answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as conn:
                conn.sendall(b"PING\r\n")
                return conn.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait(10)
            self.process = None


@pytest.fixture
def private_redis(tmp_path) -> Iterator[PrivateRedis]:
    if shutil.which("redis-server") is None:
        pytest.skip("needs redis-server on the PATH (make test installs it)")
    ARTIFACTS.mkdir(exist_ok=True)
    server = PrivateRedis(tmp_path)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def tasks(private_redis) -> Iterator[Celery]:
    """A Celery app of this test's own, on the private Redis: it queues the run's task and
    pings the worker (the suite's app stays on the suite's Redis)."""
    app = Celery("outage", broker=private_redis.url, set_as_current=False)
    app.conf.broker_transport = "workers.broker:Transport"
    yield app
    app.close()


def test_a_redis_restart_mid_run_loses_nothing_and_asks_nothing_twice(
    demo, criteria, fake_openai_server, private_redis, tasks
):
    queue, node = f"outage-{uuid.uuid4().hex[:8]}", f"judge-outage@{socket.gethostname()}"
    fake_openai_server.latency = 0.05
    judge = llm_judge(fake_openai_server, max_concurrency=4)
    run = new_run(demo, judge, "fbi-single-axis", criteria=criteria(*ALL_ASPECTS))
    env = {"REDIS_URL": private_redis.url}
    log = "judge-worker-redis-restart.log"
    with own_worker(
        queue, node, log, env=env, concurrency=2, production=True, control=tasks
    ) as worker:
        tasks.send_task("judging.work_run", (run.pk, None), queue=queue)  # 220 calls, 2 tasks
        wait_for(lambda: JudgeRun.objects.get(pk=run.pk).done >= 40, what="40 calls")
        # a second run whose queued message the restart takes with it: nobody works on it
        lost = new_run(demo, judge, "fbi-single-vanilla", criteria=criteria("overall"))
        quiet = timezone.now() - timedelta(minutes=1)
        JudgeRun.objects.filter(pk=lost.pk).update(created_at=quiet, heartbeat_at=quiet)
        private_redis.stop()
        time.sleep(3)  # the worker meets the outage: broker, limits and counts all gone
        private_redis.start()
        wait_for(finished(run.pk), timeout=180, what="the run to finish after the restart")
        wait_for(finished(lost.pk), timeout=60, what="the lost run, swept up on reconnection")
        assert worker.poll() is None, f"the worker ended; see {ARTIFACTS / log}"
    run.refresh_from_db()
    lost.refresh_from_db()
    assert (run.status, run.total, run.done, run.failed) == ("done", 220, 220, 0), run.error
    assert (lost.status, lost.total, lost.done) == ("done", 20, 20), lost.error
    assert JudgeCall.objects.filter(run=run, parse_status="parsed").count() == 220
    bodies = [request.body for request in fake_openai_server.requests]
    assert len(set(bodies)) == 240  # nothing lost
    assert len(bodies) == 240  # nothing asked twice
    counted = run.http_requests + lost.http_requests
    assert counted == fake_openai_server.request_count  # every request counted
