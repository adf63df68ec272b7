"""A caller's reserved slots of an endpoint's shared concurrency (real Redis): its share, borrowing
what is free, and giving the surplus back to a task short of its share."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Awaitable, Callable

import redis.asyncio

from apps.endpoints.limits import RedisSemaphore
from apps.endpoints.reserved_slots import ReservedSlots


def scenario(body: Callable[[RedisSemaphore], Awaitable[None]], limit: int = 4) -> None:
    """Run ``body`` with a fresh shared semaphore of ``limit`` slots."""

    async def main() -> None:
        client = redis.asyncio.Redis.from_url(os.environ["REDIS_URL"])
        semaphore = RedisSemaphore(client, f"test:slots:{uuid.uuid4().hex}", limit, poll_s=0.01)
        try:
            await body(semaphore)
        finally:
            await client.delete(semaphore.key, f"{semaphore.key}:short")
            await client.aclose()

    asyncio.run(main())


async def until(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.01)


def test_a_lone_task_borrows_the_free_slots_up_to_the_judge_limit() -> None:
    async def body(semaphore: RedisSemaphore) -> None:
        lone = ReservedSlots(semaphore, 2, "w1", cap=4)
        await lone.start()
        assert len(lone.tokens) == 2  # its share first
        await lone.balance()  # slots stayed free and no task is short: borrow them
        assert len(lone.tokens) == 4 and await semaphore.holders() == 4
        await lone.close()
        assert await semaphore.holders() == 0

    scenario(body)


def test_idle_borrowed_slots_go_back_to_a_task_short_of_its_share() -> None:
    async def body(semaphore: RedisSemaphore) -> None:
        first = ReservedSlots(semaphore, 2, "w1", cap=4)
        await first.start()
        await first.balance()
        second = ReservedSlots(semaphore, 2, "w2", cap=4)
        starting = asyncio.create_task(second.start())  # waits: nothing is free
        await asyncio.sleep(0.05)
        assert not second.tokens and not starting.done()
        await first.balance()  # someone is short: the surplus goes back at once (idle)
        await until(lambda: len(second.tokens) == 2)
        await starting
        assert len(first.tokens) == 2 and await semaphore.holders() == 4
        await first.balance()  # nobody is short now, and nothing is free: no borrowing
        assert len(first.tokens) == 2
        await first.close()
        await second.close()

    scenario(body)


def test_an_idle_task_lends_even_its_share_to_a_task_short_of_slots() -> None:
    """Shares may add up to more than the limit (a run's tasks started again after an outage):
    a task with nothing to ask keeps none, else the other waits for ever."""

    async def body(semaphore: RedisSemaphore) -> None:
        whole = ReservedSlots(semaphore, 4, "w1", cap=4)
        await whole.start()
        short = ReservedSlots(semaphore, 2, "w2", cap=4)
        starting = asyncio.create_task(short.start())
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
        assert len(whole.tokens) == 2 and await semaphore.holders() == 4
        await whole.close()
        await short.close()

    scenario(body)


def test_borrowed_slots_in_use_come_back_as_their_calls_finish() -> None:
    async def body(semaphore: RedisSemaphore) -> None:
        first = ReservedSlots(semaphore, 2, "w1", cap=4)
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
        second = ReservedSlots(semaphore, 2, "w2", cap=4)
        starting = asyncio.create_task(second.start())
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
        assert peak == 4 and await semaphore.holders() == 4  # never above the judge's limit
        await first.close()
        await second.close()

    scenario(body)
