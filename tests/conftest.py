"""Shared fixtures: the shipped catalog, users, a real Celery worker, headless Chromium."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from tests.factories import UserFactory

ROOT = Path(__file__).resolve().parent.parent
#: The published peer data (settings.DISCERN_PEERS_DIR, default ../shared/peers).
PEERS = Path(settings.DISCERN_PEERS_DIR)
ARTIFACTS = ROOT / "test-artifacts"


@pytest.fixture
def catalog(db) -> None:
    """The shipped aspect tree, criteria, tasks and perturbation kinds."""
    from apps.catalog.loading import catalog_load

    catalog_load()


@pytest.fixture
def researcher(db):
    return UserFactory(username="rita", role="researcher")


@pytest.fixture
def annotator(db):
    return UserFactory(username="ann", role="annotator")


@pytest.fixture
def api_client():
    from rest_framework.test import APIClient

    return APIClient()


def peer_path(*parts: str) -> Path:
    """A file or folder of the published peer data; the test is skipped when it is absent."""
    path = PEERS.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"peer data not found: {path} (set DISCERN_PEERS_DIR)")
    return path


def peers_missing(*parts: str) -> bool:
    """For `skipif` marks: whether this part of the peer data is absent."""
    return not PEERS.joinpath(*parts).exists()


@pytest.fixture(scope="session")
def fbi_folder() -> Path:
    return peer_path("fbi", "data")


# --- a real Celery worker, in its own process, on the test database -------------------------


def worker_environ() -> dict[str, str]:
    """This process's environment for a worker, less what only the test process needs: a
    worker runs as in production, where database access from an event loop raises."""
    return {k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"}


@pytest.fixture(scope="session")
def celery_worker(django_db_setup, django_db_blocker) -> Iterator[subprocess.Popen]:
    """Start `celery worker` against the test database and Redis, on a queue of its own."""
    from django.db import connection

    from workers.celery import app

    if not os.environ.get("REDIS_URL"):
        pytest.fail("the worker tests need REDIS_URL (run them through `make test`)")
    db = connection.settings_dict
    queue = f"test-{uuid.uuid4().hex[:8]}"
    env = {
        **worker_environ(),
        "DISCERN_QUEUE": queue,
        "DISCERN_BATCH_POLL_S": os.environ.get("DISCERN_BATCH_POLL_S", "0.5"),  # batch mode
        "DATABASE_URL": f"postgres://{db['USER']}:{db['PASSWORD']}@{db['HOST']}:{db['PORT']}/"
        f"{db['NAME']}",
    }
    app.conf.task_default_queue = queue
    ARTIFACTS.mkdir(exist_ok=True)
    log = (ARTIFACTS / "celery-worker.log").open("w")
    metrics_log = (ARTIFACTS / "celery-metrics-worker.log").open("w")

    def worker(*options: str, output: Any) -> subprocess.Popen:
        command = [sys.executable, "-m", "celery", "-A", "workers", "worker", *options]
        command += ["--loglevel=INFO", "--without-gossip", "--without-mingle"]
        return subprocess.Popen(command, cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT)

    process = worker("-Q", queue, "--concurrency=2", output=log)
    # metric judges' runs have a queue and a worker of their own (as in docker-compose.yml)
    node = f"metrics-{queue}@{socket.gethostname()}"
    metrics = worker("-Q", f"{queue}-metrics", "-n", node, "--concurrency=1", output=metrics_log)
    _wait_for_worker(app, process)
    _wait_for_worker(app, metrics, destination=[node])
    yield process
    for each in (process, metrics):
        each.terminate()
    for each in (process, metrics):
        each.wait(timeout=20)
    log.close()
    metrics_log.close()


def _wait_for_worker(
    app, process: subprocess.Popen, timeout: float = 60, destination: list[str] | None = None
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(
                f"celery worker exited with {process.returncode}; see "
                f"{ARTIFACTS / 'celery-worker.log'}"
            )
        if app.control.ping(destination=destination, timeout=0.5):
            return
    pytest.fail("celery worker did not answer a ping within a minute")


# --- headless Chromium through Playwright -----------------------------------------------------


def pytest_collection_modifyitems(config, items) -> None:
    """Browser tests run last: Playwright's sync API keeps an event loop running in the main
    thread for the whole session, and code that calls asyncio.run() cannot run after it.

    On the embedded default (SQLite: `make test`'s second pass), tests that need PostgreSQL
    or the Celery worker (which cannot open the test run's in-memory database) are skipped,
    each saying why."""
    items.sort(key=lambda item: "browser" in getattr(item, "fixturenames", ()))
    from django.conf import settings

    if settings.DATABASES["default"]["ENGINE"] != "django.db.backends.sqlite3":
        return
    reasons = {
        "postgresql": "needs PostgreSQL (concurrent writers, or its statements counted)",
        "worker": "needs the Celery worker, which cannot open an in-memory SQLite database",
    }
    for item in items:
        for marker, reason in reasons.items():
            if item.get_closest_marker(marker):
                item.add_marker(pytest.mark.skip(reason=f"on SQLite: {reason}"))
                break


@pytest.fixture(autouse=True)
def _fresh_cache() -> Iterator[None]:
    """Each test starts with an empty local cache (the pages' shared counts): ids repeat from
    test to test on SQLite, so a count cached by one would be read by the next; and with no
    limit per client address counted yet (in the `shared` cache: Redis, when the tests have
    it, clearing only the limits' keys: the Celery broker lives there too)."""
    from django.core.cache import caches
    from django.core.cache.backends.redis import RedisCache

    caches["default"].clear()  # "shared" too, without Redis: the same memory
    shared = caches["shared"]
    if isinstance(shared, RedisCache):
        client = shared._cache.get_client(write=True)
        for pattern in ("rate:*", "throttle_*"):
            for key in client.scan_iter(match=shared.make_key(pattern)):
                client.delete(key)
    yield


CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    if executable is None:
        pytest.fail("Debian's chromium is not installed (make test installs it)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=executable, headless=True, args=CHROMIUM_ARGS
        )
        yield launched
        launched.close()


@pytest.fixture
def page(browser, request):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    tab = context.new_page()
    tab.set_default_timeout(10_000)
    yield tab
    ARTIFACTS.mkdir(exist_ok=True)
    tab.screenshot(path=str(ARTIFACTS / f"{request.node.name}.png"), full_page=True)
    context.close()
