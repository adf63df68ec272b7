"""The parts an endpoint's limiter is built of (``apps.endpoints.limiter``).

- ``RedisSemaphore``: slots of an endpoint's concurrency shared by all worker processes. Each
  holder has a lease in a Redis sorted set scored by its expiry; a holder renews its lease
  while it works, and expired leases are swept on every acquire, so a killed worker frees its
  slot after at most one lease time. Redis's own clock is used, so worker clocks need not agree
  (``reserved_slots`` takes and keeps a caller's share of them);
- ``LocalRateLimiter`` / ``RedisRateLimiter``: requests per minute, in one process (evenly
  spaced) or across processes (a sliding one-minute log in Redis, where a request counts until
  a minute after its reply).

The Redis keys of an endpoint's limits are named from its ``limit_key`` (``slots_key``,
``rate_key``).
"""

from __future__ import annotations

import asyncio
import random
import threading
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

SLOT_PREFIX = "discern:llm"
RATE_WINDOW_MS = 60_000  # requests_per_minute counts the requests of any sliding minute


def slots_key(limit_key: str) -> str:
    """The Redis key of an endpoint's shared concurrency slots."""
    return f"{SLOT_PREFIX}:slots:{limit_key}"


def rate_key(limit_key: str) -> str:
    """The Redis key of an endpoint's requests of the last minute."""
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
_RATE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], window)
  return 0
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return math.max(1, tonumber(oldest[2]) + window - now)
"""
# A request's reply is back: it counts from now (it reached the server before now).
_RATE_DONE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  redis.call('ZADD', KEYS[1], now, ARGV[1])
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
end
return 0
"""

Sleep = Callable[[float], Awaitable[Any]]


class RateLimiter(Protocol):
    async def acquire(self) -> str:
        """Wait for this request's turn; a ticket to give to ``done``."""

    async def done(self, ticket: str) -> None:
        """The request's reply is back (or it failed)."""


class LocalRateLimiter:
    """At most ``per_minute`` requests per minute in this process, evenly spaced (GCRA).

    ``burst`` requests may go at once after a quiet spell.
    """

    def __init__(
        self,
        per_minute: int,
        *,
        burst: int = 1,
        clock: Callable[[], float] = time.monotonic,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        if per_minute < 1 or burst < 1:
            raise ValueError("per_minute and burst must be at least 1")
        self.interval = 60.0 / per_minute
        self._tolerance = self.interval * (burst - 1)
        self._clock = clock
        self._sleep = sleep
        self._next = 0.0  # theoretical arrival time of the next request
        self._lock = threading.Lock()  # one limiter per process: loops in two threads share it

    async def acquire(self) -> str:
        with self._lock:
            now = self._clock()
            slot = max(self._next, now)
            self._next = slot + self.interval  # reserved before waiting
        wait = slot - self._tolerance - now
        if wait > 0:
            await self._sleep(wait)
        return ""

    async def done(self, ticket: str) -> None:
        """Nothing to do: requests leave this process as they are admitted."""


class RedisRateLimiter:
    """At most ``per_minute`` requests in any sliding minute, across processes.

    A request counts from the moment it is admitted until a minute after its reply came back
    (``done``): the server received it somewhere in between, so however long a request took to
    reach it (a new connection, a busy client), the server never sees more than ``per_minute``
    requests in one minute of its own clock.
    """

    def __init__(self, redis: Any, key: str, per_minute: int, *, sleep: Sleep = asyncio.sleep):
        if per_minute < 1:
            raise ValueError("per_minute must be at least 1")
        self._script = redis.register_script(_RATE)
        self._done = redis.register_script(_RATE_DONE)
        self._key = key
        self._limit = per_minute
        self._sleep = sleep

    async def acquire(self) -> str:
        member = uuid.uuid4().hex
        while True:
            args = [self._limit, RATE_WINDOW_MS, member]
            wait_ms = int(await self._script(keys=[self._key], args=args))
            if wait_ms == 0:
                return member
            await self._sleep(wait_ms / 1000.0 + random.uniform(0.0, 0.05))

    async def done(self, ticket: str) -> None:
        await self._done(keys=[self._key], args=[ticket, RATE_WINDOW_MS])


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
