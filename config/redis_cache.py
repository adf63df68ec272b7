"""Django's Redis cache backend, keeping one Redis client per connection pool.

Django's `RedisCacheClient` builds a new `redis.Redis` for every cache call (its table of
reply callbacks included): about 0.1 ms of CPU each on a slow machine, once for every page's
session. A client over a connection pool is safe to share between calls and threads, so this
one is built once per pool (measured 2026-11-24: docs/benchmarks.md's history in git).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.core.cache.backends.redis import RedisCache, RedisCacheClient


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
