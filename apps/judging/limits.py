"""Concurrency and rate limits for calls to one LLM endpoint.

- ``asyncio.Semaphore``: calls in flight in this process (always on);
- ``RedisSemaphore``: calls in flight across all worker processes (optional). Each holder has a
  lease in a Redis sorted set scored by its expiry; a holder renews its lease while it works,
  and expired leases are swept on every acquire, so a killed worker frees its slot after at
  most one lease time. Redis's own clock is used, so worker clocks need not agree;
- ``LocalRateLimiter`` / ``RedisRateLimiter``: requests per minute (optional), in process or
  across processes (a sliding one-minute log in Redis).

``LimiterRegistry.for_endpoint`` hands out one ``EndpointLimiter`` per endpoint and event loop
(asyncio primitives and redis.asyncio clients belong to the loop that first uses them).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
import uuid
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

import redis.asyncio

logger = logging.getLogger(__name__)

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

Sleep = Callable[[float], Awaitable[Any]]


class RateLimiter(Protocol):
    async def acquire(self) -> None: ...


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

    async def acquire(self) -> None:
        now = self._clock()
        slot = max(self._next, now)
        self._next = slot + self.interval  # reserved before waiting: no lock needed in asyncio
        wait = slot - self._tolerance - now
        if wait > 0:
            await self._sleep(wait)


class RedisRateLimiter:
    """At most ``per_minute`` requests in any sliding minute, across processes."""

    def __init__(self, redis: Any, key: str, per_minute: int, *, sleep: Sleep = asyncio.sleep):
        if per_minute < 1:
            raise ValueError("per_minute must be at least 1")
        self._script = redis.register_script(_RATE)
        self._key = key
        self._limit = per_minute
        self._sleep = sleep

    async def acquire(self) -> None:
        member = uuid.uuid4().hex
        while True:
            wait_ms = int(await self._script(keys=[self._key], args=[self._limit, 60_000, member]))
            if wait_ms == 0:
                return
            await self._sleep(wait_ms / 1000.0 + random.uniform(0.0, 0.05))


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

    @contextlib.asynccontextmanager
    async def hold(self) -> AsyncIterator[str]:
        token = uuid.uuid4().hex
        while not await self.try_acquire(token):
            await asyncio.sleep(self.poll_s * random.uniform(0.5, 1.5))
        renewer = asyncio.create_task(self._keep_alive(token))
        try:
            yield token
        finally:
            renewer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await renewer
            try:
                await self.release(token)
            except Exception:  # the lease expires on its own
                logger.warning("could not release slot on %s; its lease will expire", self.key)

    async def _keep_alive(self, token: str) -> None:
        while True:
            await asyncio.sleep(self.lease_ms / 3000.0)
            try:
                alive = await self.renew(token)
            except Exception:
                logger.warning("could not renew slot lease on %s", self.key)
                continue
            if not alive:
                logger.warning("slot lease on %s expired while in use", self.key)
                return


@dataclass
class EndpointLimiter:
    """All limits for one endpoint; ``slot()`` is held for exactly one HTTP attempt."""

    semaphore: asyncio.Semaphore
    shared: RedisSemaphore | None = None
    rate: RateLimiter | None = None

    def slot(self) -> contextlib.AbstractAsyncContextManager[Any]:
        if self.shared is None and self.rate is None:
            return self.semaphore  # the common case, without the generator's overhead
        return self._full_slot()

    @contextlib.asynccontextmanager
    async def _full_slot(self) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            await stack.enter_async_context(self.semaphore)
            if self.shared is not None:
                await stack.enter_async_context(self.shared.hold())
            if self.rate is not None:
                await self.rate.acquire()
            yield


class LimiterRegistry:
    """One ``EndpointLimiter`` per (event loop, endpoint key, limits)."""

    def __init__(
        self, redis_url: str | None = None, *, prefix: str = "discern:llm", lease_s: float = 30.0
    ) -> None:
        self.redis_url = redis_url
        self.prefix = prefix
        self.lease_s = lease_s
        self._per_loop: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, dict[tuple[str, int, int | None], EndpointLimiter]
        ] = weakref.WeakKeyDictionary()
        self._redis: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = (
            weakref.WeakKeyDictionary()
        )

    def _redis_client(self, loop: asyncio.AbstractEventLoop, url: str) -> Any:
        if loop not in self._redis:
            self._redis[loop] = redis.asyncio.Redis.from_url(url)
        return self._redis[loop]

    def for_endpoint(
        self, key: str, max_concurrency: int, requests_per_minute: int | None = None
    ) -> EndpointLimiter:
        loop = asyncio.get_running_loop()
        limiters = self._per_loop.setdefault(loop, {})
        cache_key = (key, max_concurrency, requests_per_minute)
        if cache_key not in limiters:
            limiters[cache_key] = self._build(loop, key, max_concurrency, requests_per_minute)
        return limiters[cache_key]

    def _build(
        self,
        loop: asyncio.AbstractEventLoop,
        key: str,
        max_concurrency: int,
        requests_per_minute: int | None,
    ) -> EndpointLimiter:
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")
        limiter = EndpointLimiter(asyncio.Semaphore(max_concurrency))
        if self.redis_url:
            redis = self._redis_client(loop, self.redis_url)
            limiter.shared = RedisSemaphore(
                redis, f"{self.prefix}:slots:{key}", max_concurrency, lease_s=self.lease_s
            )
            if requests_per_minute:
                limiter.rate = RedisRateLimiter(
                    redis, f"{self.prefix}:rpm:{key}", requests_per_minute
                )
        elif requests_per_minute:
            limiter.rate = LocalRateLimiter(requests_per_minute)
        return limiter

    async def aclose(self) -> None:
        """Forget this loop's limiters and close its Redis client, if any."""
        loop = asyncio.get_running_loop()
        self._per_loop.pop(loop, None)
        client = self._redis.pop(loop, None)
        if client is not None:
            await client.aclose()
