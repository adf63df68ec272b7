"""The parts an endpoint's limiter is built of (``apps.endpoints.limiter``).

- ``RedisSemaphore``: slots of an endpoint's concurrency shared by all worker processes. Each
  holder has a lease in a Redis sorted set scored by its expiry; a holder renews its lease
  while it works, and expired leases are swept on every acquire, so a killed worker frees its
  slot after at most one lease time. Redis's own clock is used, so worker clocks need not agree
  (``reserved_slots`` takes and keeps a caller's share of them);
- ``WindowRate``: requests per minute, in one process or across processes: the ``limits``
  library's moving window, in memory or in Redis.

The Redis keys of an endpoint's limits are named from its ``limit_key`` (``slots_key``,
``rate_key``).
"""

from __future__ import annotations

import asyncio
import inspect
import random
import time
from collections.abc import Awaitable, Callable
from typing import Any

import limits
import limits.aio.storage
import limits.aio.strategies
import limits.storage
import limits.strategies

SLOT_PREFIX = "discern:llm"
RATE_WINDOW_S = 61  # requests_per_minute: a minute, and a second for a request to arrive


def slots_key(limit_key: str) -> str:
    """The Redis key of an endpoint's shared concurrency slots."""
    return f"{SLOT_PREFIX}:slots:{limit_key}"


def rate_key(limit_key: str) -> str:
    """The identifier of an endpoint's requests-per-minute window (``WindowRate``)."""
    return f"{SLOT_PREFIX}:rpm:{limit_key}"


_ACQUIRE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now + lease, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], lease)
  return 1
end
return 0
"""
_RENEW = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease = tonumber(ARGV[1])
if redis.call('ZSCORE', KEYS[1], ARGV[2]) then
  redis.call('ZADD', KEYS[1], now + lease, ARGV[2])
  redis.call('PEXPIRE', KEYS[1], lease)
  return 1
end
return 0
"""
Sleep = Callable[[float], Awaitable[Any]]


class WindowRate:
    """At most ``per_minute`` requests in any moving window of ``RATE_WINDOW_S``: the
    ``limits`` library's moving window, on its Redis storage (across processes) or in this
    process's memory.

    The window is a second longer than a minute: a request is counted when it is admitted and
    reaches the server a little later, so the server, counting arrivals by its own clock,
    never sees more than ``per_minute`` in one minute.
    """

    def __init__(self, storage: Any, key: str, per_minute: int, *, sleep: Sleep = asyncio.sleep):
        if per_minute < 1:
            raise ValueError("per_minute must be at least 1")
        self.item = limits.RateLimitItemPerSecond(per_minute, RATE_WINDOW_S)
        self.key = key
        if isinstance(storage, limits.aio.storage.Storage):
            self.window: Any = limits.aio.strategies.MovingWindowRateLimiter(storage)
        else:
            self.window = limits.strategies.MovingWindowRateLimiter(storage)
        self._sleep = sleep

    async def acquire(self) -> None:
        while not await self._ask(self.window.hit(self.item, self.key)):
            stats = await self._ask(self.window.get_window_stats(self.item, self.key))
            wait = max(0.01, stats.reset_time - time.time())
            await self._sleep(wait + random.uniform(0.0, 0.05))

    @staticmethod
    async def _ask(answer: Any) -> Any:
        """The answer of the memory storage's (plain) or the Redis storage's (awaited) call."""
        return await answer if inspect.isawaitable(answer) else answer


def redis_rate_storage(client: Any) -> Any:
    """The ``limits`` storage on a redis.asyncio client's connection pool."""
    return limits.aio.storage.RedisStorage(
        "async+redis://", implementation="redispy", connection_pool=client.connection_pool
    )


class RedisSemaphore:
    """A counting semaphore shared by processes, with leases so dead holders cannot leak slots."""

    def __init__(
        self,
        redis: Any,
        key: str,
        limit: int,
        *,
        lease_s: float = 30.0,
        poll_s: float = 0.05,
    ) -> None:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        if lease_s <= 0 or poll_s <= 0:
            raise ValueError("lease_s and poll_s must be positive")
        self.redis = redis
        self._acquire = redis.register_script(_ACQUIRE)
        self._renew = redis.register_script(_RENEW)
        self.key = key
        self.limit = limit
        self.lease_ms = max(1, int(lease_s * 1000))
        self.poll_s = poll_s

    async def try_acquire(self, token: str) -> bool:
        args = [self.limit, self.lease_ms, token]
        return bool(await self._acquire(keys=[self.key], args=args))

    async def renew(self, token: str) -> bool:
        return bool(await self._renew(keys=[self.key], args=[self.lease_ms, token]))

    async def release(self, token: str) -> None:
        await self.redis.zrem(self.key, token)

    async def holders(self) -> int:
        """Live leases (expired ones still present are swept by the next acquire)."""
        seconds, micros = await self.redis.time()
        now_ms = int(seconds) * 1000 + int(micros) // 1000
        return int(await self.redis.zcount(self.key, f"({now_ms}", "+inf"))
