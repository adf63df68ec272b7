"""A caller's slots of an endpoint's concurrency, reserved from the slots all workers share.

``limits.RedisSemaphore`` holds one lease per slot. Taking and giving back a slot around
every request costs two Redis round trips and a renewal task per call (~1.3 ms of CPU), so
a caller (a judge run's task, a generation job) instead reserves its share of slots when it
starts, renews their leases in the background, tops up when slots free up, and gives them all
back when it ends. Its requests go through ``ReservedSlots`` itself (``async with slots:``):
one permit per slot held. The endpoint's limit holds across all workers and callers: no
process sends more requests at once than the slots it holds.

A judge run is fanned out over tasks with a share each, but a worker may have fewer free
processes than the run has tasks. So a caller also **borrows**: when slots stay free and no
other caller is short of its share, it takes them, up to the endpoint's whole limit. A caller
short of its share says so in a Redis set (with an expiry, so a dead caller's claim lapses);
then every caller above its share gives the surplus back, each slot as soon as a request using
it finishes.

Slot tokens start with the worker's node name, so a restarted worker can free the slots of
its killed predecessor at once (``node_slots_release``) instead of waiting for their leases
to expire.
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

from apps.endpoints.limits import SLOT_PREFIX, RedisSemaphore
from apps.outages import REDIS_DOWN

logger = logging.getLogger(__name__)

SLOT_LEASE_S = 10.0  # a killed worker's slots come back after this, at the latest
TOP_UP_EVERY_S = 0.25
SHORT_FOR_S = 3.0  # a task's "short of my share" lapses unless renewed within this

# Say whether this task is short of its share (ARGV[2] = 1) or not, drop lapsed entries, and
# return how many *other* tasks are short.
_SHORT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if ARGV[2] == '1' then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]))
else
  redis.call('ZREM', KEYS[1], ARGV[1])
end
local others = redis.call('ZCARD', KEYS[1])
if ARGV[2] == '1' then others = others - 1 end
return others
"""


class ReservedSlots:
    """This task's slots of a shared semaphore: ``share`` of them, up to ``cap`` when borrowing.

    Use it as the gate of the task's calls: ``async with slots:`` waits for a free slot.
    """

    def __init__(
        self, semaphore: RedisSemaphore, share: int, node: str = "", *, cap: int | None = None
    ) -> None:
        self.semaphore = semaphore
        self.share = share
        self.cap = max(share, cap or share)
        #: The caller has nothing to ask for now (a run's task waiting for the others): it
        #: keeps no share, so a caller short of slots gets them all back.
        self.idle = False
        self.prefix = f"{node or 'local'}/{os.getpid()}/"
        self.name = self.prefix + uuid.uuid4().hex[:12]  # this task, in the "short" set
        self.tokens: list[str] = []
        self._permits = asyncio.Semaphore(0)  # one per slot held
        self._owed = 0  # surplus slots to give back as calls finish (others are short)
        self._dropped = 0  # permits whose lease expired: retire them, no token to give back
        self._short = semaphore.redis.register_script(_SHORT)
        self._keeper: asyncio.Task[None] | None = None

    # -- the gate ------------------------------------------------------------------------------

    async def __aenter__(self) -> None:
        await self._permits.acquire()

    async def __aexit__(self, *_: object) -> None:
        if not await self._retire():
            self._permits.release()

    def release(self) -> None:
        """One more permit (to let a waiting call through, e.g. to see a cancellation)."""
        self._permits.release()

    async def _retire(self) -> bool:
        """Retire the permit just freed if a slot is to go; True if it went."""
        if self._dropped:
            self._dropped -= 1
            return True
        if self._owed and self.tokens:
            self._owed -= 1
            token = self.tokens.pop()
            try:
                await self.semaphore.release(token)
            except Exception:  # its lease expires on its own
                logger.warning("could not give back a slot on %s", self.semaphore.key)
            return True
        return False

    # -- reserving -----------------------------------------------------------------------------

    async def _take_free(self, limit: int) -> int:
        taken = 0
        while len(self.tokens) < limit:
            token = self.prefix + uuid.uuid4().hex[:12]
            if not await self.semaphore.try_acquire(token):
                break
            self.tokens.append(token)
            self._permits.release()
            taken += 1
        return taken

    async def _others_short(self, short: bool) -> int:
        args = [self.name, "1" if short else "0", int(SHORT_FOR_S * 1000)]
        return int(await self._short(keys=[self._short_key], args=args))

    @property
    def _short_key(self) -> str:
        return f"{self.semaphore.key}:short"

    async def start(self) -> None:
        """Reserve up to the share (waiting until at least one slot is free), then keep it."""
        while True:
            await self._take_free(self.share)
            await self._others_short(len(self.tokens) < self.share)
            if self.tokens:
                break
            await asyncio.sleep(self.semaphore.poll_s)
        self._keeper = asyncio.create_task(self._keep())

    async def balance(self) -> None:
        """Top up to the share; then give back the surplus if another task is short of its
        share, or borrow what is free if none is. An idle caller wants no share."""
        wanted = 0 if self.idle else self.share
        if len(self.tokens) < wanted:
            await self._take_free(wanted)
        others = await self._others_short(len(self.tokens) < wanted)
        self._owed = max(0, len(self.tokens) - wanted) if others else 0
        while (self._owed or self._dropped) and not self._permits.locked():
            await self._permits.acquire()  # a permit no call holds: retire it now
            if not await self._retire():
                self._permits.release()
                break
        if not others and not self.idle:
            await self._take_free(self.cap)

    async def _keep(self) -> None:
        # Renewal is timed by the clock, not by the sleeps: on a busy loop a round of
        # balancing takes far longer than its sleep, and leases counted in sleeps expired
        # (another worker then took the slots while this one still used them).
        renewed = time.monotonic()
        while True:
            await asyncio.sleep(TOP_UP_EVERY_S)
            try:
                await self.balance()
                if time.monotonic() - renewed >= self.semaphore.lease_ms / 3000.0:
                    renewed = time.monotonic()
                    await self._renew()
            except Exception:  # Redis hiccup: the leases outlive it, or are dropped below
                logger.warning("could not renew reserved slots on %s", self.semaphore.key)

    async def _renew(self) -> None:
        for token in list(self.tokens):
            if not await self.semaphore.renew(token):
                # the lease expired (Redis was out of reach too long): another worker may hold
                # the slot now, so this process gives up one permit for good
                logger.warning("a reserved slot on %s expired", self.semaphore.key)
                self.tokens.remove(token)
                self._dropped += 1

    async def close(self) -> None:
        if self._keeper is not None:
            self._keeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._keeper
        tokens, self.tokens = self.tokens, []
        try:  # best effort: with Redis away, the leases expire on their own
            await self._others_short(False)
            for token in tokens:
                await self.semaphore.release(token)
        except REDIS_DOWN:
            logger.warning("reserved slots on %s left to expire", self.semaphore.key)


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
