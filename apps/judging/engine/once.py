"""Once per run: every request a run sends is counted (before it is sent), and each distinct
prompt is asked by one task only (claimed by its cache key).

Counts: each task counts the attempts it sends and saves the count with its results, so the
run's counter is exact for every task that lives to save, whatever happens to Redis. With
Redis, each attempt also waits until the task's count is stored there (under its lease
token), so that a worker killed with attempts sent and not yet saved has them counted when it
restarts (``requests_recover``). Prompt claims live in Redis when the run is fanned out over
tasks (docs/judging.md, "How runs execute"): a task that finds a prompt claimed by another
waits for that task's reply in the cache instead of asking again. Without Redis a run has one
task, and both are kept in memory.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import Any

import redis
from django.db import transaction
from django.db.models import F

from apps.endpoints.slots import SLOT_PREFIX
from apps.judging.models import JudgeRun, RunRequests
from apps.outages import REDIS_DOWN

logger = logging.getLogger(__name__)
KEEP_COUNT_S = 30 * 24 * 3600  # a task's count outlives any pause of its run
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


def requests_key(identity: str, token: str) -> str:
    """Where a task (its lease token) keeps the count of the attempts it sent for a run."""
    return f"{SLOT_PREFIX}:http:{identity}:{token}"


class RequestCounter:
    """HTTP attempts this task sent for a run, counted just before each is sent (in the loop
    thread); ``report()`` (in the task's thread) says how many to add to the run's counter.

    With Redis (``shared``: the loop thread's async client), an attempt is sent only once
    the task's whole count, itself included, is stored there: one key per task, written by
    this task alone, so each write sets the whole count (a Redis restart loses nothing the
    next write does not put back), and the attempts that come to be counted while one write
    is on its way share the next one. An attempt whose count cannot be stored is not sent
    (the error is the attempt's).
    """

    def __init__(self, identity: str, token: str) -> None:
        self.key = requests_key(identity, token)
        self.sent = 0
        self._reported = 0
        self.shared: Any = None  # the loop thread's async Redis client, once it has one
        self._waiting = 0  # attempts waiting for the next write
        self._next: asyncio.Future[None] | None = None  # done once their write is stored
        self._writer: asyncio.Task[None] | None = None

    async def count(self) -> None:
        if self.shared is None:
            self.sent += 1
            return
        if self._next is None:
            self._next = asyncio.get_running_loop().create_future()
        done = self._next
        self._waiting += 1
        if self._writer is None or self._writer.done():
            self._writer = asyncio.ensure_future(self._write())
        await asyncio.shield(done)

    async def _write(self) -> None:
        """Store the count with the waiting attempts, one write at a time, until none waits."""
        while self._waiting:
            waiting, done = self._waiting, self._next
            self._waiting, self._next = 0, None
            assert done is not None
            try:
                await self.shared.set(self.key, self.sent + waiting, ex=KEEP_COUNT_S)
            except asyncio.CancelledError:
                done.cancel()
                raise
            except Exception as exc:  # Redis down: the waiting attempts are not sent
                done.set_exception(exc)
                done.exception()  # retrieved here too: no "never retrieved" warning
                continue
            self.sent += waiting
            done.set_result(None)

    def report(self) -> tuple[int, int]:
        """(attempts sent since the last report, attempts sent in all)."""
        sent = self.sent
        added, self._reported = sent - self._reported, sent
        return added, sent


def requests_recover(redis_url: str, node: str) -> int:
    """Count the attempts ``node``'s previous incarnation sent and never saved (it was
    killed): each of its tasks' counts in Redis, less what the task saved. How many."""
    client: Any = redis.Redis.from_url(redis_url)
    added = 0
    try:
        for key in client.scan_iter(match=f"{SLOT_PREFIX}:http:*:{node}/*"):
            run_id, created, token = key.decode()[len(SLOT_PREFIX) + 6 :].split(":", 2)
            sent = int(client.get(key) or 0)
            added += _requests_add_missing(int(run_id), created, token, sent)
            client.delete(key)
    finally:
        client.close()
    return added


@transaction.atomic
def _requests_add_missing(run_id: int, created: str, token: str, sent: int) -> int:
    run = JudgeRun.objects.filter(pk=run_id).first()
    if run is None or run_identity(run) != f"{run_id}:{created}":
        return 0  # another run of a reset database
    saved, _ = RunRequests.objects.select_for_update().get_or_create(run=run, token=token)
    missing = max(0, sent - saved.sent)
    if missing:
        RunRequests.objects.filter(pk=saved.pk).update(sent=sent)
        JudgeRun.objects.filter(pk=run_id).update(http_requests=F("http_requests") + missing)
    return missing


class PromptClaims:
    """Which task of a run asks each distinct prompt (cache key). ``redis``: the loop's async
    client (None: the run has one task, and the claims are kept here)."""

    def __init__(self, identity: str, token: str) -> None:
        self.prefix = f"{SLOT_PREFIX}:ask:{identity}:"
        self.token = token
        self.held: set[str] = set()
        self.redis: Any = None

    async def take(self, keys: Iterable[str]) -> set[str]:
        """The keys this task now holds (all of them without Redis)."""
        wanted = [k for k in keys if k not in self.held]
        if self.redis is None or not wanted:
            self.held.update(wanted)
            return set(wanted)
        pipe = self.redis.pipeline(transaction=False)
        for key in wanted:
            pipe.set(self.prefix + key, self.token, nx=True, px=int(ASK_LEASE_S * 1000))
        won = {key for key, ok in zip(wanted, await pipe.execute(), strict=True) if ok}
        self.held |= won
        return won

    async def release(self, keys: Iterable[str]) -> None:
        """Give prompts back (their call failed, or this task stops): another task may ask.
        Best effort: with Redis away, the claims lapse by themselves."""
        keys = [k for k in keys if k in self.held]
        self.held.difference_update(keys)
        if self.redis is not None and keys:
            pipe = self.redis.pipeline(transaction=False)
            for key in keys:
                pipe.eval(_RELEASE, 1, self.prefix + key, self.token)
            try:
                await pipe.execute()
            except REDIS_DOWN:
                logger.warning("prompt claims left to lapse: Redis is out of reach")

    def done(self, key: str) -> None:
        """The prompt's reply came back: the claim lapses by itself once it is stored."""
        self.held.discard(key)

    async def renew(self) -> None:
        if self.redis is not None and self.held:
            pipe = self.redis.pipeline(transaction=False)
            for key in self.held:
                pipe.pexpire(self.prefix + key, int(ASK_LEASE_S * 1000))
            await pipe.execute()
