"""The one limiter of an endpoint, used by every caller of its model (docs/endpoints.md, Limits).

Judge runs, perturbation generation and any later caller get an endpoint's limiter from here
(``limiter_for``), and ``client.complete`` holds one of its slots for every HTTP attempt. So
their requests to one endpoint count together, under the endpoint's ``limit_key``:

- **concurrency**: at most ``max_concurrency`` requests in flight. With Redis (``REDIS_URL``)
  the slots are shared by every worker process: a caller reserves its share of them once
  (``reserved_slots.ReservedSlots``; borrowing what is free, giving back when another caller is
  short). Each attempt holds one while it is on the wire and none while it waits to retry,
  unless the caller holds one for the whole call (``EndpointLimiter.call``: its retries and a
  follow-up, as a judge's format retry). Without Redis (the embedded demo) the limit holds in
  each process;
- **rate**: at most ``requests_per_minute`` attempts in any minute over all workers, as the
  server counts them (``limits.WindowRate``: the ``limits`` library's moving window, in Redis);
  without Redis, in the process.

A limiter belongs to the event loop that made it (asyncio primitives and redis.asyncio clients
do): ``limiters_close`` (awaited by ``client.close_clients``) gives its slots back and closes
its Redis connection before the loop ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import weakref
from collections.abc import AsyncIterator
from typing import Any, Protocol

import limits.storage
import redis.asyncio

from apps.endpoints.limits import (
    RedisSemaphore,
    WindowRate,
    rate_key,
    redis_rate_storage,
    slots_key,
)
from apps.endpoints.reserved_slots import SLOT_LEASE_S, ReservedSlots

#: The limiters (by id) whose slot the running asyncio task holds through ``call()``.
_HELD: contextvars.ContextVar[frozenset[int]] = contextvars.ContextVar(
    "endpoint_slots_held", default=frozenset()
)


class Limited(Protocol):
    """What names an endpoint's limits (``client.EndpointConfig`` has it)."""

    @property
    def limit_key(self) -> str: ...

    @property
    def max_concurrency(self) -> int: ...

    @property
    def requests_per_minute(self) -> int | None: ...


class EndpointLimiter:
    """All limits of one endpoint for one caller in one event loop; ``slot()`` is held for
    exactly one HTTP attempt.

    ``share`` is how many of the endpoint's slots this caller reserves (default: all of them;
    a judge run's task asks for its part); ``node`` names the worker, so a restarted worker
    frees its dead predecessor's slots at once (``reserved_slots.node_slots_release``).
    """

    def __init__(
        self,
        key: str,
        max_concurrency: int,
        *,
        redis: Any = None,
        rate: WindowRate | None = None,
        share: int | None = None,
        node: str = "",
    ) -> None:
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")
        self.key = key
        self.max_concurrency = max_concurrency
        self.share = max(1, min(share or max_concurrency, max_concurrency))
        self.redis = redis
        self.rate = rate
        self.reserved: ReservedSlots | None = None
        self.slots: asyncio.Semaphore | ReservedSlots = asyncio.Semaphore(self.share)
        self._reserving: asyncio.Task[None] | None = None
        if redis is not None:
            shared = RedisSemaphore(redis, slots_key(key), max_concurrency, lease_s=SLOT_LEASE_S)
            self.reserved = ReservedSlots(shared, self.share, node, cap=max_concurrency)
            self.slots = self.reserved

    def start(self) -> None:
        """Begin reserving this caller's share, in the background (attempts wait for a slot)."""
        if self.reserved is not None and self._reserving is None:
            self._reserving = asyncio.create_task(self.reserved.start())

    def idle(self, idle: bool) -> None:
        """Say whether this caller has nothing to ask for now: an idle caller keeps no share
        of the shared slots (``ReservedSlots.idle``)."""
        if self.reserved is not None:
            self.reserved.idle = idle

    @property
    def held(self) -> int:
        """Slots this caller holds now (its share, without Redis)."""
        return len(self.reserved.tokens) if self.reserved is not None else self.share

    def slot(self) -> contextlib.AbstractAsyncContextManager[Any]:
        """Admit one HTTP attempt: a concurrency slot (unless ``call()`` holds one), then its
        turn under the rate limit."""
        if id(self) in _HELD.get():
            return self._rated() if self.rate is not None else contextlib.nullcontext()
        if self.reserved is None and self.rate is None:
            return self.slots  # the common case, without the generator's overhead
        return self._full_slot()

    @contextlib.asynccontextmanager
    async def call(self) -> AsyncIterator[None]:
        """Hold one slot for a whole call: its attempts, the waits between them, and any
        follow-up made inside (a judge's format retry). Waiting here, nothing is sent yet."""
        if id(self) in _HELD.get():
            yield
            return
        await self._reserving_started()
        async with self.slots:
            held = _HELD.set(_HELD.get() | {id(self)})
            try:
                yield
            finally:
                _HELD.reset(held)

    async def _reserving_started(self) -> None:
        """Until the first slot is reserved; its error (Redis unreachable) is every caller's."""
        if self.reserved is not None:
            self.start()
            assert self._reserving is not None
            await asyncio.shield(self._reserving)

    @contextlib.asynccontextmanager
    async def _full_slot(self) -> AsyncIterator[None]:
        await self._reserving_started()
        async with self.slots:
            if self.rate is None:
                yield
            else:
                async with self._rated():
                    yield

    @contextlib.asynccontextmanager
    async def _rated(self) -> AsyncIterator[None]:
        assert self.rate is not None
        await self.rate.acquire()
        yield

    async def aclose(self) -> None:
        """Give every reserved slot back (best effort: a lost one's lease expires)."""
        if self._reserving is not None and not self._reserving.done():
            self._reserving.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reserving
        elif self._reserving is not None and not self._reserving.cancelled():
            self._reserving.exception()  # seen: its error (Redis away) was every caller's
        if self.reserved is not None:
            await self.reserved.close()


LimiterKey = tuple[str, int, int | None, int | None]


class LimiterRegistry:
    """One ``EndpointLimiter`` per (event loop, endpoint, limits, share); limits shared through
    Redis when it has a URL, else within the process (the rate windows in the process's
    memory, so loops that follow each other keep them)."""

    def __init__(self, redis_url: str | None = None) -> None:
        self.redis_url = redis_url or None
        self._per_loop: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, dict[LimiterKey, EndpointLimiter]
        ] = weakref.WeakKeyDictionary()
        self._redis: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = (
            weakref.WeakKeyDictionary()
        )
        self._local_rates = limits.storage.MemoryStorage()  # the process's windows

    def _redis_client(self, loop: asyncio.AbstractEventLoop, url: str) -> Any:
        if loop not in self._redis:
            self._redis[loop] = redis.asyncio.Redis.from_url(url)
        return self._redis[loop]

    def for_endpoint(
        self,
        key: str,
        max_concurrency: int,
        requests_per_minute: int | None = None,
        *,
        share: int | None = None,
        node: str = "",
    ) -> EndpointLimiter:
        loop = asyncio.get_running_loop()
        limiters = self._per_loop.setdefault(loop, {})
        found = (key, max_concurrency, requests_per_minute, share)
        if found not in limiters:
            limiters[found] = self._build(loop, found, node)
            limiters[found].start()
        return limiters[found]

    def _build(
        self, loop: asyncio.AbstractEventLoop, found: LimiterKey, node: str
    ) -> EndpointLimiter:
        key, max_concurrency, per_minute, share = found
        if not self.redis_url:
            rate = WindowRate(self._local_rates, rate_key(key), per_minute) if per_minute else None
            return EndpointLimiter(key, max_concurrency, rate=rate, share=share, node=node)
        client = self._redis_client(loop, self.redis_url)
        storage = redis_rate_storage(client)
        remote = WindowRate(storage, rate_key(key), per_minute) if per_minute else None
        return EndpointLimiter(
            key, max_concurrency, redis=client, rate=remote, share=share, node=node
        )

    async def aclose(self) -> None:
        """Close this loop's limiters (their slots go back) and its Redis client, if any."""
        loop = asyncio.get_running_loop()
        for limiter in self._per_loop.pop(loop, {}).values():
            await limiter.aclose()
        client = self._redis.pop(loop, None)
        if client is not None:
            await client.aclose()


_registry: LimiterRegistry | None = None


def _limits() -> LimiterRegistry:
    """The process's registry: limits shared through the settings' ``REDIS_URL``, if any."""
    global _registry
    if _registry is None:
        from django.conf import settings

        url = getattr(settings, "REDIS_URL", "") if settings.configured else ""
        _registry = LimiterRegistry(url)
    return _registry


def configure_limits(redis_url: str | None) -> None:
    """Share limits through this Redis (a URL), or keep them in each process (None); the
    settings' ``REDIS_URL`` is used unless this is called."""
    global _registry
    _registry = LimiterRegistry(redis_url)


def limits_reset() -> None:
    """Back to the settings' ``REDIS_URL`` (after ``configure_limits``)."""
    global _registry
    _registry = None


def limiter_for(endpoint: Limited, *, share: int | None = None, node: str = "") -> EndpointLimiter:
    """The endpoint's limiter in the running event loop (made on first use)."""
    return _limits().for_endpoint(
        endpoint.limit_key,
        endpoint.max_concurrency,
        endpoint.requests_per_minute,
        share=share,
        node=node,
    )


async def limiters_close() -> None:
    """Close the running loop's limiters: await it before the loop ends."""
    await _limits().aclose()
