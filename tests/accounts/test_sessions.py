"""Page sessions: with Redis they are read from it (config/settings.py, `cached_db`), so a
page's authentication costs one statement; logging out, a new password, an expired session
and a deactivated account still end the session at once."""

import time

import pytest
import redis
from django.conf import settings
from django.contrib.sessions.backends.base import SessionBase
from django.core.cache import caches
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils.module_loading import import_string

from tests.factories import PASSWORD, UserFactory

pytestmark = pytest.mark.django_db
HOME = "/"


def signed_in(client) -> bool:
    return client.get(HOME).status_code == 200


def store(key: str) -> SessionBase:
    return import_string(f"{settings.SESSION_ENGINE}.SessionStore")(key)


def test_with_redis_a_page_reads_the_session_from_it_and_only_the_user_from_the_database(
    client,
):
    if not settings.REDIS_URL:
        pytest.skip("sessions are in the database without Redis")
    client.force_login(UserFactory())
    with CaptureQueriesContext(connection) as captured:
        assert signed_in(client)
    sent = [query["sql"] for query in captured.captured_queries]
    assert not [sql for sql in sent if "django_session" in sql]
    assert 'FROM "accounts_user"' in sent[0]


def test_with_redis_pages_read_their_sessions_through_one_kept_client(client, monkeypatch):
    """Django's own Redis cache builds a client for every call (config/redis_cache.py)."""
    if not settings.REDIS_URL:
        pytest.skip("sessions are in the database without Redis")
    client.force_login(UserFactory())
    assert signed_in(client)
    built = []
    build = redis.Redis.__init__

    def counted(self, *args, **kwargs):
        built.append(self)
        build(self, *args, **kwargs)

    monkeypatch.setattr(redis.Redis, "__init__", counted)
    for _ in range(3):
        assert signed_in(client)
    assert built == []


def test_a_session_lost_by_the_cache_is_read_from_the_database(client):
    client.force_login(UserFactory())
    key = client.session.session_key
    if settings.REDIS_URL:
        caches[settings.SESSION_CACHE_ALIAS].delete(store(key).cache_key)  # type: ignore[attr-defined]
    assert signed_in(client)


def test_logging_out_ends_the_session_for_every_copy_of_the_cookie(client):
    client.force_login(UserFactory())
    cookie = client.cookies[settings.SESSION_COOKIE_NAME].value
    assert signed_in(client)
    client.post("/accounts/logout/")
    client.cookies[settings.SESSION_COOKIE_NAME] = cookie  # a copy kept by someone else
    assert not signed_in(client)


def test_a_new_password_ends_the_other_sessions(client):
    user = UserFactory()
    client.force_login(user)
    assert signed_in(client)
    user.set_password("another password altogether")
    user.save()
    assert not signed_in(client)


def test_a_deactivated_account_is_signed_out(client):
    user = UserFactory()
    client.force_login(user)
    user.is_active = False
    user.save()
    assert not signed_in(client)


def test_an_expired_session_is_refused(client):
    client.force_login(UserFactory())
    session = store(client.session.session_key)
    session.set_expiry(1)
    session.save()
    assert signed_in(client)
    time.sleep(1.5)
    assert not signed_in(client)


def test_logging_in_with_the_password_starts_a_session(client):
    UserFactory(username="pat")
    response = client.post("/accounts/login/", {"username": "pat", "password": PASSWORD})
    assert response.status_code == 302
    assert signed_in(client)
