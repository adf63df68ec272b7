"""Once per run: every request a run sends is counted (before it is sent), and each distinct
prompt is asked by one task only (claimed by its cache key).

Both live in Redis when the run is fanned out over tasks (docs/judging.md, "How runs
execute"): the count survives a killed worker, and a task that finds a prompt claimed by
another task waits for that task's reply in the cache instead of asking again. Without Redis
a run has one task, and both are kept in memory.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

import redis

from apps.endpoints.limits import SLOT_PREFIX

KEEP_COUNT_S = 30 * 24 * 3600  # the request count of a run outlives any pause of it
ASK_LEASE_S = 30.0  # a dead task's claim on a prompt lapses after this; renewed while alive

# Delete a claim only if this task still holds it.
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


def run_identity(run: Any) -> str:
    """The run's id and creation time: a database reset that reuses ids never meets the
    counts of another run in Redis."""
    return f"{run.pk}:{run.created_at.timestamp():.6f}"


def requests_key(identity: str) -> str:
    return f"{SLOT_PREFIX}:http:{identity}"


class RequestCounter:
    """HTTP attempts sent for a run, counted just before each is sent (in the loop thread).

    With Redis each attempt waits until its count is stored there, but the attempts that
    come to be counted while one increment is on its way share the next one (``INCRBY n``):
    one round trip and one connection for a burst of attempts, not one each (at 256 in
    flight, one each ran the client out of connections).

    ``report()`` (in the task's thread) says how to update the run's counter: with Redis,
    raise it to the run's count there (every task, every incarnation, abandoned attempts
    included: the value the last increment returned, or read once if this task sent none);
    without, add what this task sent since the last report.
    """

    def __init__(self, identity: str, sync: redis.Redis | None) -> None:
        self.key = requests_key(identity)
        self.sent = 0
        self._reported = 0
        self._floor_sent = False
        self._floor = 0  # the floor last reported
        self._sync = sync
        self.shared: Any = None  # the loop thread's async Redis client, once it has one
        self.stored = 0  # the run's count in Redis after this task's last increment
        self._waiting = 0  # attempts waiting for the next increment
        self._next: asyncio.Future[None] | None = None  # done once their increment is stored
        self._writer: asyncio.Task[None] | None = None

    async def count(self) -> None:
        self.sent += 1
        if self.shared is None:
            return
        if self._next is None:
            self._next = asyncio.get_running_loop().create_future()
        done = self._next
        self._waiting += 1
        if self._writer is None or self._writer.done():
            self._writer = asyncio.ensure_future(self._write())
        await asyncio.shield(done)

    async def _write(self) -> None:
        """Store the waiting counts, one increment at a time, until none is waiting."""
        while self._waiting:
            waiting, done = self._waiting, self._next
            self._waiting, self._next = 0, None
            assert done is not None
            try:
                async with self.shared.pipeline(transaction=False) as pipe:
                    pipe.incrby(self.key, waiting)
                    pipe.expire(self.key, KEEP_COUNT_S)
                    value, _ = await pipe.execute()
            except asyncio.CancelledError:
                done.cancel()
                raise
            except Exception as exc:  # Redis down: every attempt waiting fails with it
                done.set_exception(exc)
                done.exception()  # retrieved here too: no "never retrieved" warning
                continue
            self.stored = max(self.stored, int(value))
            done.set_result(None)

    def report(self) -> tuple[int, int]:
        """(attempts to add, floor to raise the counter to)."""
        sent = self.sent
        added, self._reported = sent - self._reported, sent
        if self._sync is None or self.shared is None:
            return added, 0
        stored = self.stored
        if stored:  # this task's increments say it: no read needed
            if stored == self._floor:
                return 0, 0
            self._floor = stored
            return 0, stored
        if not added and self._floor_sent:
            return 0, 0  # nothing sent here since the last report: nothing to raise
        self._floor_sent = True
        return 0, int(self._sync.get(self.key) or 0)


class PromptClaims:
    """Which task of a run asks each distinct prompt (cache key)."""

    def __init__(self, identity: str, token: str, sync: redis.Redis | None) -> None:
        self.prefix = f"{SLOT_PREFIX}:ask:{identity}:"
        self.token = token
        self.held: set[str] = set()
        self._sync = sync

    def take(self, keys: Iterable[str]) -> set[str]:
        """The keys this task now holds (all of them without Redis)."""
        wanted = [k for k in keys if k not in self.held]
        if self._sync is None:
            self.held.update(wanted)
            return set(wanted)
        pipe = self._sync.pipeline(transaction=False)
        for key in wanted:
            pipe.set(self.prefix + key, self.token, nx=True, px=int(ASK_LEASE_S * 1000))
        won = {key for key, ok in zip(wanted, pipe.execute(), strict=True) if ok}
        self.held |= won
        return won

    def release(self, keys: Iterable[str]) -> None:
        """Give prompts back (their call failed, or this task stops): another task may ask."""
        keys = [k for k in keys if k in self.held]
        self.held.difference_update(keys)
        if self._sync is not None and keys:
            pipe = self._sync.pipeline(transaction=False)
            for key in keys:
                pipe.eval(_RELEASE, 1, self.prefix + key, self.token)
            pipe.execute()

    def done(self, key: str) -> None:
        """The prompt's reply came back: the claim lapses by itself once it is stored."""
        self.held.discard(key)

    def renew(self) -> None:
        if self._sync is not None and self.held:
            pipe = self._sync.pipeline(transaction=False)
            for key in self.held:
                pipe.pexpire(self.prefix + key, int(ASK_LEASE_S * 1000))
            pipe.execute()
