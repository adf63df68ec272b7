"""The one limiter of an endpoint, used by every caller of its model (docs/endpoints.md, Limits).

Judge runs, perturbation generation and any later caller get an endpoint's limiter from here
(``limiter_for``), and ``client.complete`` holds one of its slots for every HTTP attempt. So
their requests to one endpoint count together, under the endpoint's ``limit_key``:

- **concurrency**: at most ``max_concurrency`` requests in flight. With Redis (``REDIS_URL``)
  the slots are shared by every worker process: a caller reserves its share of them once
  (``slots.ReservedSlots``; borrowing what is free, giving back when another caller is short).
  Each attempt holds one while it is on the wire and none while it waits to retry, unless the
  caller holds one for the whole call (``EndpointLimiter.call``: its retries and a follow-up,
  as a judge's format retry). Without Redis (the embedded demo) the limit holds in each
  process;
- **rate**: at most ``requests_per_minute`` attempts in any minute over all workers, as the
  server counts them (``WindowRate``: the ``limits`` library's moving window, in Redis);
  without Redis, in the process.

A limiter belongs to the event loop that made it (asyncio primitives and redis.asyncio clients
do): ``limiters_close`` (awaited by ``client.close_clients``) gives its slots back and closes
its Redis connection before the loop ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import inspect
import random
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Protocol

import limits
import limits.aio.storage
import limits.aio.strategies
import limits.storage
import limits.strategies
import redis.asyncio

from apps.endpoints.slots import SLOT_PREFIX, ReservedSlots, slots_key

RATE_WINDOW_S = 61  # requests_per_minute: a minute, and a second for a request to arrive

#: The limiters (by id) whose slot the running asyncio task holds through ``call()``.
_HELD: contextvars.ContextVar[frozenset[int]] = contextvars.ContextVar(
    "endpoint_slots_held", default=frozenset()
)


def rate_key(limit_key: str) -> str:
    """The identifier of an endpoint's requests-per-minute window (``WindowRate``)."""
    return f"{SLOT_PREFIX}:rpm:{limit_key}"


class WindowRate:
    """At most ``per_minute`` requests in any moving window of ``RATE_WINDOW_S``: the
    ``limits`` library's moving window, on its Redis storage (across processes) or in this
    process's memory.

    The window is a second longer than a minute: a request is counted when it is admitted and
    reaches the server a little later, so the server, counting arrivals by its own clock,
    never sees more than ``per_minute`` in one minute.
    """

    def __init__(
        self,
        storage: Any,
        key: str,
        per_minute: int,
        *,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    ) -> None:
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
    frees its dead predecessor's slots at once (``slots.node_slots_release``).
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
        if redis is not None:
            self.reserved = ReservedSlots(redis, slots_key(key), max_concurrency, self.share, node)
        self.slots = self.reserved or asyncio.Semaphore(self.share)

    def start(self) -> None:
        """Begin reserving this caller's share, in the background (attempts wait for a slot)."""
        if self.reserved is not None:
            self.reserved.start()

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
        held = id(self) in _HELD.get()
        if self.rate is None:
            return contextlib.nullcontext() if held else self.slots  # without a generator
        return self._rated(held)

    @contextlib.asynccontextmanager
    async def _rated(self, held: bool) -> AsyncIterator[None]:
        assert self.rate is not None
        async with contextlib.nullcontext() if held else self.slots:
            await self.rate.acquire()
            yield

    @contextlib.asynccontextmanager
    async def call(self) -> AsyncIterator[None]:
        """Hold one slot for a whole call: its attempts, the waits between them, and any
        follow-up made inside (a judge's format retry). Waiting here, nothing is sent yet."""
        if id(self) in _HELD.get():
            yield
            return
        async with self.slots:
            held = _HELD.set(_HELD.get() | {id(self)})
            try:
                yield
            finally:
                _HELD.reset(held)

    async def aclose(self) -> None:
        """Give every reserved slot back (best effort: a lost one's lease lapses)."""
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
        client: Any = None
        storage: Any = self._local_rates  # the process's, or Redis's below
        if self.redis_url:
            if loop not in self._redis:
                self._redis[loop] = redis.asyncio.Redis.from_url(self.redis_url)
            client = self._redis[loop]
            storage = limits.aio.storage.RedisStorage(  # the limits library on our connections
                "async+redis://", implementation="redispy", connection_pool=client.connection_pool
            )
        rate = WindowRate(storage, rate_key(key), per_minute) if per_minute else None
        return EndpointLimiter(
            key, max_concurrency, redis=client, rate=rate, share=share, node=node
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
