"""A worker task's share of a judge's concurrency, reserved from the slots all workers share.

``limits.RedisSemaphore`` holds one lease per slot. Taking and giving back a slot around
every request costs two Redis round trips and a renewal task per call (~1.3 ms of CPU), so
a task instead reserves up to its share of slots when it starts, renews their leases in the
background, tops up when slots free up, and gives them all back when it ends. Inside the
process an ``asyncio.Semaphore`` sized to the slots held admits the calls. The judge's limit
holds across all workers: no process sends more requests at once than the slots it holds.

Slot tokens start with the worker's node name, so a restarted worker can free the slots of
its killed predecessor at once (``node_slots_release``) instead of waiting for their leases
to expire.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import uuid
from typing import Any

import redis

from apps.judging.limits import RedisSemaphore

logger = logging.getLogger(__name__)

SLOT_PREFIX = "discern:llm"
SLOT_LEASE_S = 10.0  # a killed worker's slots come back after this, at the latest
TOP_UP_EVERY_S = 1.0


def slots_key(limit_key: str) -> str:
    """The Redis key of a judge's shared concurrency slots."""
    return f"{SLOT_PREFIX}:slots:{limit_key}"


class ReservedSlots:
    """Up to ``want`` slots of a shared semaphore, held for as long as the task works."""

    def __init__(self, semaphore: RedisSemaphore, want: int, node: str = "") -> None:
        self.semaphore = semaphore
        self.want = want
        self.prefix = f"{node or 'local'}/{os.getpid()}/"
        self.tokens: list[str] = []
        self.gate = asyncio.Semaphore(0)  # one permit per slot held
        self._keeper: asyncio.Task[None] | None = None

    async def _take_free(self) -> int:
        taken = 0
        while len(self.tokens) < self.want:
            token = self.prefix + uuid.uuid4().hex[:12]
            if not await self.semaphore.try_acquire(token):
                break
            self.tokens.append(token)
            self.gate.release()
            taken += 1
        return taken

    async def start(self) -> None:
        """Reserve what is free (waiting until at least one slot is), then keep it."""
        while not await self._take_free():
            await asyncio.sleep(self.semaphore.poll_s)
        self._keeper = asyncio.create_task(self._keep())

    async def _keep(self) -> None:
        waited = 0.0
        while True:
            await asyncio.sleep(TOP_UP_EVERY_S)
            waited += TOP_UP_EVERY_S
            try:
                await self._take_free()
                if waited >= self.semaphore.lease_ms / 3000.0:
                    waited = 0.0
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
                await self.gate.acquire()

    async def close(self) -> None:
        if self._keeper is not None:
            self._keeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._keeper
        for token in self.tokens:
            await self.semaphore.release(token)  # best effort: a lost one expires on its own
        self.tokens = []


def node_slots_release(redis_url: str, node: str) -> int:
    """Free every judge slot held by ``node``'s previous incarnation (it is dead)."""
    client: Any = redis.Redis.from_url(redis_url)
    freed = 0
    try:
        for key in client.scan_iter(match=f"{SLOT_PREFIX}:slots:*"):
            members = [m for m in client.zrange(key, 0, -1) if m.decode().startswith(f"{node}/")]
            if members:
                freed += int(client.zrem(key, *members))
    finally:
        client.close()
    return freed
