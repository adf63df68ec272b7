"""Django's Redis cache backend, keeping one Redis client per connection pool.

Django's `RedisCacheClient` builds a new `redis.Redis` for every cache call (its table of
reply callbacks included): about 0.1 ms of CPU each on a slow machine, once for every page's
session. A client over a connection pool is safe to share between calls and threads, so this
one is built once per pool (measured 2026-11-24: docs/benchmarks.md's history in git).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.redis import RedisCache, RedisCacheClient

from apps.outages import REDIS_DOWN

logger = logging.getLogger(__name__)


class KeptClient(RedisCacheClient):
    # What this reads of Django's client (set by its __init__; not in django-stubs).
    _client: Any
    _get_connection_pool: Callable[[bool], Any]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, Any] = {}  # by the id of the pool (Django keeps the pools)

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        pool = self._get_connection_pool(write)
        client = self._clients.get(id(pool))
        if client is None:
            client = self._clients[id(pool)] = self._client(connection_pool=pool)
        return client


class KeptClientRedisCache(RedisCache):
    """`django.core.cache.backends.redis.RedisCache` with `KeptClient`."""

    def __init__(self, server: Any, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = KeptClient


class SessionRedisCache(KeptClientRedisCache):
    """The sessions' cache (Django's ``cached_db`` reads it before the database): with Redis
    away, a read misses and a write is skipped, so pages go on from the database alone.
    Deleting still fails (a 503, config/errors.py): a session logged out while Redis is away
    must not live on in it."""

    def get(self, key: Any, default: Any = None, version: Any = None) -> Any:
        try:
            return super().get(key, default, version)
        except REDIS_DOWN as error:
            logger.warning("sessions read from the database alone: %r", error)
            return default

    def set(
        self, key: Any, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: Any = None
    ) -> None:
        try:
            super().set(key, value, timeout, version)
        except REDIS_DOWN as error:
            logger.warning("a session kept in the database alone: %r", error)

    def has_key(self, key: Any, version: Any = None) -> bool:
        try:
            return bool(super().has_key(key, version))
        except REDIS_DOWN:
            return False
