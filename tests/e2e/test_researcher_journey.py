"""A researcher runs a whole study from the browser (tests/e2e/journey.py), on PostgreSQL with
Redis and a Celery worker, and on the embedded default (SQLite and the filesystem broker,
started as `make demo` starts it). Every answer is a success; no server error is logged."""

import logging
import os
import re
import subprocess
import time

import httpx
import pytest

from apps.annotation.demo import DEMO_PASSWORD
from tests.conftest import ARTIFACTS
from tests.e2e.journey import Journey
from tests.test_demo_command import ROOT, UNSET, _free_port, _stop_group

pytestmark = [pytest.mark.e2e]

SERVER_ERROR = re.compile(r"Traceback|Internal Server Error|\" 5\d\d ")


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_journey_on_postgresql(browser, live_server, catalog, celery_worker, caplog):
    from apps.annotation.demo import demo_load
    from apps.judging.loading import judging_load

    demo_load()
    judging_load()
    worker_log = ARTIFACTS / "celery-worker.log"
    start = worker_log.stat().st_size
    caplog.set_level(logging.ERROR)
    journey = Journey(browser, live_server.url, DEMO_PASSWORD, shots="journey-pg")
    journey.walk()
    assert journey.failures == []
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
    with worker_log.open() as log:
        log.seek(start)
        assert not SERVER_ERROR.search(log.read())


@pytest.fixture
def embedded(tmp_path):
    """`scripts/demo.sh` with no DATABASE_URL or REDIS_URL, in a var/ folder of its own."""
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k not in UNSET}
    env.update(PORT=str(port), DISCERN_VAR_DIR=str(tmp_path / "var"))
    (tmp_path / "var").mkdir()
    log_path = tmp_path / "demo.log"
    log = log_path.open("w")
    process = subprocess.Popen(
        ["bash", "scripts/demo.sh"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert process.poll() is None, log_path.read_text()
        try:
            if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                break
        except httpx.TransportError:
            time.sleep(0.5)
    else:
        pytest.fail("the embedded default did not come up in 2 minutes:\n" + log_path.read_text())
    yield base, tmp_path
    _stop_group(process)
    log.close()


def test_journey_on_the_embedded_default(browser, embedded):
    base, folder = embedded
    journey = Journey(browser, base, DEMO_PASSWORD, shots="journey-embedded")
    journey.walk()
    assert journey.failures == []
    printed = (folder / "demo.log").read_text()
    assert not SERVER_ERROR.search(printed), printed[-3000:]
    # the worker's log: under the var/ folder, or the checkout's var/ (scripts/demo.sh)
    for worker_log in (folder / "var" / "worker.log", ROOT / "var" / "worker.log"):
        if (
            worker_log.exists()
            and worker_log.stat().st_mtime >= (folder / "demo.log").stat().st_ctime
        ):
            text = worker_log.read_text()
            assert not SERVER_ERROR.search(text), text[-3000:]
