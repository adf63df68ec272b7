"""Redis away (sessions, shared limits): pages go on from the database, /healthz answers JSON
503, and what needs Redis answers 503 with Retry-After, never a 500 (config/errors.py)."""

from __future__ import annotations

import socket

import pytest
from django.test import Client

from apps.annotation.models import Panel, PanelLink
from tests.factories import StudyFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def logged_in(settings) -> Client:
    """A researcher logged in, sessions kept as with Redis (Django's cached_db)."""
    settings.SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"
    client = Client(raise_request_exception=False)
    client.force_login(UserFactory(role="researcher", username="r-outage"))
    return client


@pytest.fixture
def redis_away(settings) -> str:
    """From now on, Redis is an address where nothing listens."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"redis://127.0.0.1:{port}/0"
    backend = "config.redis_cache"
    settings.REDIS_URL = url
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
        "sessions": {"BACKEND": f"{backend}.SessionRedisCache", "LOCATION": url},
        "shared": {"BACKEND": f"{backend}.KeptClientRedisCache", "LOCATION": url},
    }
    settings.SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"
    settings.SESSION_CACHE_ALIAS = "sessions"
    return url


def test_healthz_answers_json_503_while_redis_is_away(logged_in, redis_away):
    response = logged_in.get("/healthz")
    assert response.status_code == 503 and response.json() == {"status": "error"}


def test_pages_go_on_from_the_database_while_redis_is_away(catalog, logged_in, redis_away):
    page = logged_in.get("/")
    assert page.status_code == 200 and "r-outage" in page.content.decode()


def test_what_needs_redis_answers_503_with_retry_after(redis_away):
    client = Client(raise_request_exception=False)
    answer = client.post("/api/v1/auth/token/", {"username": "x", "password": "y"})
    assert answer.status_code == 503 and answer["Retry-After"] == "30"
    assert answer.json() == {"status": "unavailable"}
    study = StudyFactory()
    Panel.objects.create(study=study, consent="Agree?", completion_code="DONE")
    PanelLink.objects.create(study=study, token="link-outage")
    arrival = "?PROLIFIC_PID=pid-1&STUDY_ID=s-1&SESSION_ID=x-1"
    page = client.post(f"/join/link-outage/{arrival}", {"consent": "1"})  # counted in Redis
    assert page.status_code == 503 and "Back in a moment" in page.content.decode()
