"""An endpoint's concurrency slots, shared by every worker process through Redis.

A slot is a lease in a Redis sorted set, scored by its expiry on Redis's clock (worker clocks
need not agree); a lease not renewed lapses, so a killed worker frees its slots after
``LEASE_S``, or at once when it restarts (its tokens start with its node name:
``node_slots_release``). Taking and giving back a slot around every request would cost two
round trips and a renewal per call, so a caller (a judge run's task, a generation job)
reserves its share of slots once (``ReservedSlots``), renews their leases in the background
and gates its requests on them (``async with slots:``, one permit per slot held): no process
sends more requests at once than the slots it holds. It also **borrows** what stays free while
no other caller is short of its share, up to the endpoint's limit; a caller short of its share
says so in a Redis set (with an expiry, so a dead caller's claim lapses), and every caller above
its share, or idle, gives slots back, each as soon as a request using it finishes.

Why not a library (docs/endpoints.md, Limits, names each one read and tried for issue 52): the
Redis semaphores on PyPI take and give back a slot around each use, with a heartbeat per slot
and a poll or a blocked connection while waiting; the closest (``py-redis-semaphore``) names
its own tokens, so a restarted worker could not free its predecessor's slots; none keeps a
share, borrows or lends; the others need Python 3.12, pin an older redis-py, have no leases
or renewal, or are synchronous.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
import uuid
from typing import Any

import redis

from apps.outages import REDIS_DOWN

logger = logging.getLogger(__name__)

SLOT_PREFIX = "discern:llm"
LEASE_S = 10.0  # a killed worker's slots come back after this, at the latest
BALANCE_EVERY_S = 0.25
SHORT_FOR_S = 3.0  # a caller's "short of my share" lapses unless renewed within this


def slots_key(limit_key: str) -> str:
    """The Redis key of an endpoint's shared concurrency slots."""
    return f"{SLOT_PREFIX}:slots:{limit_key}"


_NOW = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
"""
# Sweep lapsed leases, then lease ARGV[3...] while fewer than ARGV[1] are held; how many taken.
_TAKE = f"""{_NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local free = tonumber(ARGV[1]) - redis.call('ZCARD', KEYS[1])
local taken = 0
while taken < free and taken + 3 <= #ARGV do
  taken = taken + 1
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[taken + 2])
end
if taken > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return taken
"""
# Renew the leases ARGV[2...] that are still there; the ones that lapsed.
_RENEW = f"""{_NOW}
local lost = {{}}
for i = 2, #ARGV do
  if redis.call('ZSCORE', KEYS[1], ARGV[i]) then
    redis.call('ZADD', KEYS[1], now + tonumber(ARGV[1]), ARGV[i])
  else
    table.insert(lost, ARGV[i])
  end
end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return lost
"""
# Say whether caller ARGV[1] is short of its share (ARGV[2] = 1); how many *others* are.
_SHORT = f"""{_NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if ARGV[2] == '1' then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]))
  return redis.call('ZCARD', KEYS[1]) - 1
end
redis.call('ZREM', KEYS[1], ARGV[1])
return redis.call('ZCARD', KEYS[1])
"""


class ReservedSlots:
    """One caller's slots of the ``limit`` an endpoint's ``key`` shares: ``share`` of them,
    up to ``limit`` when borrowing. ``async with slots:`` waits for one of them."""

    def __init__(
        self,
        client: Any,
        key: str,
        limit: int,
        share: int | None = None,
        node: str = "",
        *,
        lease_s: float = LEASE_S,
        poll_s: float = 0.05,
    ) -> None:
        self.redis, self.key, self.limit = client, key, limit
        self.share = max(1, min(share or limit, limit))
        self.lease_ms = max(1, int(lease_s * 1000))
        self.poll_s = poll_s
        #: The caller has nothing to ask for now (a run's task waiting for the others): it
        #: keeps no share, so a caller short of slots gets them all back.
        self.idle = False
        self.prefix = f"{node or 'local'}/{os.getpid()}/"
        self.name = self.prefix + uuid.uuid4().hex[:12]  # this caller, in the "short" set
        self.tokens: list[str] = []
        self._permits = asyncio.Semaphore(0)  # one per slot held
        self._owed = 0  # surplus slots to give back as calls finish (others are short)
        self._dropped = 0  # permits whose lease lapsed: retire them, no token to give back
        self._take = client.register_script(_TAKE)
        self._renew = client.register_script(_RENEW)
        self._short = client.register_script(_SHORT)
        self._reserving: asyncio.Task[None] | None = None
        self._keeper: asyncio.Task[None] | None = None

    # -- the gate ------------------------------------------------------------------------------

    async def __aenter__(self) -> None:
        # until the first slot is reserved; its error (Redis unreachable) is every caller's
        await asyncio.shield(self.start())
        await self._permits.acquire()

    async def __aexit__(self, *_: object) -> None:
        if not await self._retire():
            self._permits.release()

    async def _retire(self) -> bool:
        """Retire the permit just freed if a slot is to go; True if it went."""
        if self._dropped:
            self._dropped -= 1
            return True
        if not (self._owed and self.tokens):
            return False
        self._owed -= 1
        token = self.tokens.pop()
        try:
            await self.redis.zrem(self.key, token)
        except Exception:  # its lease lapses on its own
            logger.warning("could not give back a slot on %s", self.key)
        return True

    # -- reserving -----------------------------------------------------------------------------

    def start(self) -> asyncio.Task[None]:
        """Reserve the share in the background; the task ends once a slot is held."""
        if self._reserving is None:
            self._reserving = asyncio.create_task(self._reserve())
        return self._reserving

    async def _reserve(self) -> None:
        while True:
            await self.take(self.share)
            await self._others_short(len(self.tokens) < self.share)
            if self.tokens:
                break
            await asyncio.sleep(self.poll_s)
        self._keeper = asyncio.create_task(self._keep())

    async def take(self, up_to: int) -> int:
        """Take free slots until this caller holds ``up_to`` (one round trip); how many."""
        tokens = [self.prefix + uuid.uuid4().hex[:12] for _ in range(up_to - len(self.tokens))]
        if not tokens:
            return 0
        taken = int(await self._take(keys=[self.key], args=[self.limit, self.lease_ms, *tokens]))
        self.tokens += tokens[:taken]
        for _ in range(taken):
            self._permits.release()
        return taken

    async def _others_short(self, short: bool) -> int:
        args = [self.name, "1" if short else "0", int(SHORT_FOR_S * 1000)]
        return int(await self._short(keys=[f"{self.key}:short"], args=args))

    async def balance(self) -> None:
        """Top up to the share; then give back the surplus if another caller is short of its
        share, or borrow what is free if none is. An idle caller wants no share."""
        wanted = 0 if self.idle else self.share
        await self.take(wanted)
        others = await self._others_short(len(self.tokens) < wanted)
        self._owed = max(0, len(self.tokens) - wanted) if others else 0
        while (self._owed or self._dropped) and not self._permits.locked():
            await self._permits.acquire()  # a permit no call holds: retire it now
            if not await self._retire():
                self._permits.release()
                break
        if not others and not self.idle:
            await self.take(self.limit)

    async def _keep(self) -> None:
        # Renewal is timed by the clock, not by the sleeps: on a busy loop a round of
        # balancing takes far longer than its sleep, and leases counted in sleeps lapsed
        # (another worker then took the slots while this one still used them).
        renewed = time.monotonic()
        while True:
            await asyncio.sleep(BALANCE_EVERY_S)
            try:
                await self.balance()
                if time.monotonic() - renewed >= self.lease_ms / 3000.0:
                    renewed = time.monotonic()
                    await self._renew_leases()
            except Exception:  # Redis hiccup: the leases outlive it, or are dropped below
                logger.warning("could not renew reserved slots on %s", self.key)

    async def _renew_leases(self) -> None:
        if not self.tokens:
            return
        for token in await self._renew(keys=[self.key], args=[self.lease_ms, *self.tokens]):
            if token.decode() in self.tokens:  # not given back meanwhile: it lapsed (Redis
                # out of reach too long), another worker may hold it now: a permit goes for good
                logger.warning("a reserved slot on %s lapsed", self.key)
                self.tokens.remove(token.decode())
                self._dropped += 1

    async def close(self) -> None:
        """Give every slot back (best effort: with Redis away, the leases lapse)."""
        for task in (self._reserving, self._keeper):
            if task is not None and not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        if self._reserving is not None and not self._reserving.cancelled():
            self._reserving.exception()  # seen: its error (Redis away) was every caller's
        tokens, self.tokens = self.tokens, []
        try:
            await self._others_short(False)
            if tokens:
                await self.redis.zrem(self.key, *tokens)
        except REDIS_DOWN:
            logger.warning("reserved slots on %s left to lapse", self.key)


def node_slots_release(redis_url: str, node: str) -> int:
    """Free every endpoint slot held by ``node``'s previous incarnation (it is dead)."""
    client: Any = redis.Redis.from_url(redis_url)
    freed = 0
    try:
        for key in client.scan_iter(match=f"{SLOT_PREFIX}:slots:*"):
            if key.endswith(b":short"):
                continue
            members = [m for m in client.zrange(key, 0, -1) if m.decode().startswith(f"{node}/")]
            if members:
                freed += int(client.zrem(key, *members))
    finally:
        client.close()
    return freed
