"""A researcher runs a whole study from the browser (tests/e2e/journey.py), on PostgreSQL with
Redis and a Celery worker, and on the embedded default (SQLite and the filesystem broker,
started as `make demo` starts it). Every answer is a success; no server error is logged."""

import logging
import re

import pytest

from apps.annotation.demo import DEMO_PASSWORD
from tests.conftest import ARTIFACTS
from tests.e2e.journey import Journey
from tests.test_demo_command import demo  # noqa: F401 (the embedded default, as a fixture)

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


def test_journey_on_the_embedded_default(browser, demo):  # noqa: F811
    """`scripts/demo.sh` with no DATABASE_URL or REDIS_URL, in a var/ folder of its own (the
    fixture of tests/test_demo_command.py)."""
    base, folder, _ = demo
    journey = Journey(browser, base, DEMO_PASSWORD, shots="journey-embedded")
    journey.walk()
    assert journey.failures == []
    printed = (folder / "demo.log").read_text()
    assert not SERVER_ERROR.search(printed), printed[-3000:]
    worker = (folder / "var" / "worker.log").read_text()
    assert not SERVER_ERROR.search(worker), worker[-3000:]
