"""Production hardening: `check --deploy` is clean with the documented environment, log-ins
and token requests are throttled, and /healthz tells anonymous callers nothing but a status."""

import os
import secrets
import subprocess
import sys

import pytest
from django.core.cache import cache

from tests.conftest import ROOT
from tests.factories import PASSWORD

# The production environment documented in docs/deployment.md.
PRODUCTION = {
    "DJANGO_DEBUG": "false",
    "DJANGO_ALLOWED_HOSTS": "discern.example.org",
    "DJANGO_CSRF_TRUSTED_ORIGINS": "https://discern.example.org",
    "DJANGO_SECURE_COOKIES": "true",
    "DJANGO_SECURE_SSL_REDIRECT": "true",
    "DJANGO_SECURE_HSTS_SECONDS": "31536000",
    "DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS": "true",
    "DJANGO_SECURE_HSTS_PRELOAD": "true",
    "DJANGO_SECURE_PROXY_SSL_HEADER": "true",
}


def _check_deploy(tmp_path, **extra: str) -> subprocess.CompletedProcess:
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DISCERN_"))}
    env = {
        **keep,
        **PRODUCTION,
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
        "DISCERN_VAR_DIR": str(tmp_path),
        **extra,
    }
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_check_deploy_is_clean_with_the_documented_environment(tmp_path):
    done = _check_deploy(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "System check identified no issues" in done.stdout
    assert "WARNING" not in done.stdout + done.stderr


def test_check_deploy_warns_without_it(tmp_path):
    done = _check_deploy(tmp_path, DJANGO_SECURE_COOKIES="false", DJANGO_SECURE_HSTS_SECONDS="0")
    assert done.returncode != 0
    assert "security.W004" in done.stderr and "security.W012" in done.stderr


@pytest.fixture
def three_tries(settings):
    settings.AXES_FAILURE_LIMIT = 3
    cache.clear()  # the token throttle counts in the cache


@pytest.mark.django_db
def test_after_wrong_passwords_the_right_one_is_refused_on_the_login_page(
    client, researcher, three_tries
):
    for n in range(3):  # a forged X-Forwarded-For does not make each try a new address
        wrong = client.post(
            "/accounts/login/",
            {"username": "rita", "password": "wrong"},
            HTTP_X_FORWARDED_FOR=f"10.0.0.{n}",
        )
        assert wrong.status_code in (200, 429)
    right = client.post(
        "/accounts/login/",
        {"username": "rita", "password": PASSWORD},
        HTTP_X_FORWARDED_FOR="10.0.0.99",
    )
    assert right.status_code == 429
    assert "Too many failed log-ins" in right.content.decode()
    assert "_auth_user_id" not in client.session


@pytest.mark.django_db
def test_after_wrong_passwords_the_token_endpoint_refuses_the_right_one(
    api_client, researcher, three_tries
):
    url = "/api/v1/auth/token/"
    for _ in range(3):
        api_client.post(url, {"username": "rita", "password": "wrong"})
    right = api_client.post(url, {"username": "rita", "password": PASSWORD})
    assert right.status_code == 429
    assert "Too many failed log-ins" in right.json()["detail"]
    assert "token" not in right.json()


@pytest.mark.django_db
def test_token_requests_are_rate_limited(api_client, researcher, settings):
    cache.clear()
    settings.AXES_FAILURE_LIMIT = 1000
    rate = "5/min"
    from rest_framework.throttling import ScopedRateThrottle

    original = ScopedRateThrottle.THROTTLE_RATES
    ScopedRateThrottle.THROTTLE_RATES = {**original, "token": rate}
    try:
        codes = [
            api_client.post("/api/v1/auth/token/", {"username": "x", "password": "y"}).status_code
            for _ in range(7)
        ]
    finally:
        ScopedRateThrottle.THROTTLE_RATES = original
        cache.clear()
    assert codes[:5] == [400] * 5 and codes[5:] == [429, 429]


@pytest.mark.django_db
def test_healthz_shows_no_database_error(client, monkeypatch):
    from config import health

    class Broken:
        def cursor(self):
            raise RuntimeError("password authentication failed for user discern at db:5432")

    monkeypatch.setattr(health, "connection", Broken())
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json() == {"status": "error"}
