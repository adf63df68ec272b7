"""An endpoint's slots shared through Redis (real Redis): leases that lapse and are renewed, a
caller's reserved share, borrowing what is free, and giving the surplus back to a caller short
of its share."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable

import pytest
import redis.asyncio

from apps.endpoints.slots import ReservedSlots


class Shared:
    """An endpoint's shared slots in Redis: callers of them and the live leases."""

    def __init__(self, client: redis.asyncio.Redis, limit: int) -> None:
        self.redis, self.key, self.limit = client, f"test:slots:{uuid.uuid4().hex}", limit

    def caller(self, share: int | None = None, node: str = "w", **kw: float) -> ReservedSlots:
        return ReservedSlots(self.redis, self.key, self.limit, share, node, poll_s=0.01, **kw)

    async def now_ms(self) -> int:
        seconds, micros = await self.redis.time()
        return int(seconds) * 1000 + int(micros) // 1000

    async def holders(self) -> int:
        """Live leases (lapsed ones still present are swept by the next take)."""
        return int(await self.redis.zcount(self.key, f"({await self.now_ms()}", "+inf"))


@pytest.fixture
def scenario(redis_url: str) -> Callable[..., None]:
    return lambda body, limit=4: asyncio.run(run(body, redis_url, limit))


async def run(body: Callable[[Shared], Awaitable[None]], url: str, limit: int) -> None:
    """Run ``body`` with fresh shared slots, ``limit`` of them."""
    client = redis.asyncio.Redis.from_url(url)
    shared = Shared(client, limit)
    try:
        await body(shared)
    finally:
        await client.delete(shared.key, f"{shared.key}:short")
        await client.aclose()


async def until(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.01)


def test_a_killed_holders_lease_lapses_and_its_slot_is_taken(scenario: Callable[..., None]) -> None:
    async def body(shared: Shared) -> None:
        dead_lease = await shared.now_ms() + 600  # on Redis's clock
        await shared.redis.zadd(shared.key, {"dead/1/token": dead_lease})  # never renewed
        live = shared.caller()
        starting = live.start()
        await asyncio.sleep(0.2)
        assert not starting.done() and not live.tokens
        await asyncio.wait_for(starting, 2.0)
        assert live.tokens and await shared.holders() == 1
        await live.close()
        assert await shared.holders() == 0

    scenario(body, limit=1)


def test_leases_of_live_holders_are_renewed(scenario: Callable[..., None]) -> None:
    async def body(shared: Shared) -> None:
        slots = shared.caller(lease_s=0.5)
        await slots.start()
        async with slots:
            await asyncio.sleep(1.2)  # over twice the lease: renewal keeps the slot
            assert await shared.caller(node="intruder").take(1) == 0
        await slots.close()

    scenario(body, limit=1)


def test_a_lone_task_borrows_the_free_slots_up_to_the_judge_limit(
    scenario: Callable[..., None],
) -> None:
    async def body(shared: Shared) -> None:
        lone = shared.caller(2, "w1")
        await lone.start()
        assert len(lone.tokens) == 2  # its share first
        await lone.balance()  # slots stayed free and no task is short: borrow them
        assert len(lone.tokens) == 4 and await shared.holders() == 4
        await lone.close()
        assert await shared.holders() == 0

    scenario(body)


def test_idle_borrowed_slots_go_back_to_a_task_short_of_its_share(
    scenario: Callable[..., None],
) -> None:
    async def body(shared: Shared) -> None:
        first = shared.caller(2, "w1")
        await first.start()
        await first.balance()
        second = shared.caller(2, "w2")
        starting = second.start()  # waits: nothing is free
        await asyncio.sleep(0.05)
        assert not second.tokens and not starting.done()
        await first.balance()  # someone is short: the surplus goes back at once (idle)
        await until(lambda: len(second.tokens) == 2)
        await starting
        assert len(first.tokens) == 2 and await shared.holders() == 4
        await first.balance()  # nobody is short now, and nothing is free: no borrowing
        assert len(first.tokens) == 2
        await first.close()
        await second.close()

    scenario(body)


def test_an_idle_task_lends_even_its_share_to_a_task_short_of_slots(
    scenario: Callable[..., None],
) -> None:
    """Shares may add up to more than the limit (a run's tasks started again after an outage):
    a task with nothing to ask keeps none, else the other waits for ever."""

    async def body(shared: Shared) -> None:
        whole = shared.caller(4, "w1")
        await whole.start()
        short = shared.caller(2, "w2")
        starting = short.start()
        await asyncio.sleep(0.05)
        await whole.balance()  # busy: its share is its own
        assert len(whole.tokens) == 4 and not short.tokens
        whole.idle = True
        await whole.balance()
        await until(lambda: len(short.tokens) == 2)
        await starting
        assert not whole.tokens
        whole.idle = False
        await whole.balance()  # busy again: it takes what is free, up to its share
        assert len(whole.tokens) == 2 and await shared.holders() == 4
        await whole.close()
        await short.close()

    scenario(body)


def test_borrowed_slots_in_use_come_back_as_their_calls_finish(
    scenario: Callable[..., None],
) -> None:
    async def body(shared: Shared) -> None:
        first = shared.caller(2, "w1")
        await first.start()
        await first.balance()
        finish = [asyncio.Event() for _ in range(4)]
        in_flight = 0
        peak = 0

        async def call(done: asyncio.Event, slots: ReservedSlots) -> None:
            nonlocal in_flight, peak
            async with slots:
                in_flight += 1
                peak = max(peak, in_flight)
                await done.wait()
                in_flight -= 1

        calls = [asyncio.create_task(call(done, first)) for done in finish]
        await until(lambda: in_flight == 4)
        second = shared.caller(2, "w2")
        starting = second.start()
        await asyncio.sleep(0.05)
        await first.balance()  # every slot is busy: nothing can go back yet
        assert len(first.tokens) == 4 and not second.tokens
        finish[0].set()
        await until(lambda: len(first.tokens) == 3)  # that call's slot went back
        await until(lambda: len(second.tokens) == 1)
        finish[1].set()
        await until(lambda: len(second.tokens) == 2)
        finish[2].set()  # the surplus is paid: this slot stays with the first task
        await asyncio.sleep(0.05)
        assert len(first.tokens) == 2
        finish[3].set()
        await asyncio.gather(*calls, starting)
        assert peak == 4 and await shared.holders() == 4  # never above the judge's limit
        await first.close()
        await second.close()

    scenario(body)
