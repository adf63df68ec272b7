"""One runner for model calls: every caller that asks an endpoint many things at once (a judge
run, an adversarial search's generator, LLM perturbation) goes through it.

Its core, ``Asker``, lives in an event loop with the endpoint's limiter made there
(``limiter_for``: the caller's share of the endpoint's slots, with every worker and every other
caller of the endpoint). ``await asker.ask(ask)`` gives one ``Answer``:

- each ask holds one slot for its whole call (``limiter.call()``): its HTTP attempts, the waits
  between them (the retry layer is inside ``complete``) and its format retry;
- the format retry is made here, once: an ask with a ``parsed`` check whose reply fails it is
  asked once more with ``retry_messages`` (a format reminder);
- ``stop()``: asks not yet holding a slot are not asked (they come back with no outcome), asks
  on the wire finish, so no reply already paid for is lost.

A caller whose code is a coroutine (a judge run: ``apps.judging.engine.llm_work``) makes an
``Asker`` in its loop. A caller that is a plain thread uses ``Runner``: an ``Asker`` in a
helper thread's loop, handed batches of ``Ask`` and giving back one ``Answer`` per ask,
pushed: the loop thread wakes the caller's (a ``threading.Event``) once per turn of its loop,
however many replies that turn finished, so the caller never polls.

Which stored replies may answer an ask instead (the cache) is the caller's: they live in its
tables. The runner only asks.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Collection, Coroutine, Iterable, Iterator
from dataclasses import dataclass
from functools import partial
from types import TracebackType
from typing import Any, TypeVar

from apps.endpoints.client import (
    CallOutcome,
    EndpointConfig,
    SamplingParams,
    TokenLogprobs,
    close_clients,
    complete,
)
from apps.endpoints.limiter import EndpointLimiter, limiter_for

T = TypeVar("T")
Messages = list[dict[str, str]]
logger = logging.getLogger(__name__)
#: How long each step of closing may take (the cancelled calls, then the clients and limiter)
#: before the runner ends anyway: reserved slots lapse with their lease.
SHUTDOWN_S = 20.0
#: The longest ``run`` waits between two looks at its answers (it is woken when one comes).
WAIT_S = 1.0


@dataclass
class Ask:
    """One request. ``handle`` is the caller's, returned on its answer. With ``parsed`` (is
    this reply in the expected format?) and ``retry_messages`` (the messages that ask again
    with a reminder), a reply that fails the check is asked once more."""

    handle: Any
    messages: Messages
    params: SamplingParams
    parsed: Callable[[str, TokenLogprobs | None], bool] | None = None
    retry_messages: Callable[[Messages, str], Messages] | None = None


@dataclass
class Answer:
    """What an ask got: its outcome (None: not asked, the runner stopped first or ``error``
    was raised before a reply came), the format retry's outcome and messages if one was
    made, and the HTTP attempts of both."""

    handle: Any
    outcome: CallOutcome | None
    retry: CallOutcome | None = None
    retry_messages: Messages | None = None
    attempts: int = 0
    error: BaseException | None = None

    @property
    def asked(self) -> bool:
        return self.outcome is not None


class Asker:
    """The runner's core, for a caller whose own code runs in an event loop (a judge run: one
    coroutine per prompt, from its claim to its save). Made in the loop that uses it; ``Runner``
    is the same core behind a helper thread, for callers that are plain threads.
    ``share``/``node``: the limiter's (this caller's part of the endpoint's slots; the worker,
    whose slots a restart frees). ``on_attempt`` is awaited just before each HTTP attempt."""

    def __init__(
        self,
        endpoint: EndpointConfig,
        *,
        share: int | None = None,
        node: str = "",
        on_attempt: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.on_attempt = on_attempt
        self.limiter: EndpointLimiter = limiter_for(endpoint, share=share, node=node)
        self._waiting: set[asyncio.Task[Any]] = set()  # asking, not holding a slot yet
        self._stopped: set[asyncio.Task[Any]] = set()  # cancelled by ``stop``
        self.stopping = False

    @property
    def held(self) -> int:
        """Slots of the endpoint held now."""
        return self.limiter.held

    def idle(self, idle: bool) -> None:
        """Say whether the caller has nothing to ask for now (its slots go to whoever is
        short of them; ``EndpointLimiter.idle``)."""
        self.limiter.idle(idle)

    def stop(self) -> None:
        """Ask nothing new: asks waiting for a slot come back not asked; those on the wire
        finish."""
        self.stopping = True
        for task in self._waiting:
            self._stopped.add(task)
            task.cancel()

    async def ask(self, ask: Ask) -> Answer:
        """One ask under one slot; not asked if stopped before it got one."""
        task = asyncio.current_task()
        assert task is not None
        if self.stopping:
            return Answer(ask.handle, None)
        self._waiting.add(task)
        try:
            async with self.limiter.call():
                self._waiting.discard(task)
                if self.stopping:
                    return Answer(ask.handle, None)
                return await self._ask_now(ask)
        except asyncio.CancelledError:
            if task not in self._stopped:
                raise
            task.uncancel()  # stopped while waiting for its slot: not asked
            return Answer(ask.handle, None)
        finally:
            self._waiting.discard(task)
            self._stopped.discard(task)

    async def _ask_now(self, ask: Ask) -> Answer:
        """The call, and its format retry when the reply fails the ask's check."""
        answer = Answer(ask.handle, None)

        async def counted() -> None:
            answer.attempts += 1
            if self.on_attempt is not None:
                await self.on_attempt()

        answer.outcome = first = await self._complete(ask.messages, ask.params, counted)
        if (
            not first.ok
            or ask.parsed is None
            or ask.retry_messages is None
            or ask.parsed(first.text or "", first.logprobs)
        ):
            return answer
        answer.retry_messages = ask.retry_messages(ask.messages, first.text or "")
        answer.retry = await self._complete(answer.retry_messages, ask.params, counted)
        return answer

    def _complete(
        self, messages: Messages, params: SamplingParams, counted: Callable[[], Awaitable[None]]
    ) -> Awaitable[CallOutcome]:
        return complete(self.endpoint, messages, params, limiter=self.limiter, on_attempt=counted)

    async def close(self) -> None:
        """Close this loop's clients and limiters (their slots go back); await it before the
        loop ends, once no ask runs."""
        try:
            await asyncio.wait_for(close_clients(), SHUTDOWN_S)
        except TimeoutError:
            logger.warning("closing the model-call clients took over %.0f s", SHUTDOWN_S)


class Runner:
    """An ``Asker`` in a helper thread's loop, asked in batches from the caller's thread (see
    the module docstring)."""

    def __init__(
        self,
        endpoint: EndpointConfig,
        *,
        share: int | None = None,
        node: str = "",
        on_attempt: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.pending = 0  # asks submitted whose answer is not taken yet (caller's thread)
        self._finished: deque[tuple[Ask, asyncio.Task[Answer]]] = deque()
        self._ready = threading.Event()  # set when answers wait in ``_finished``
        self._waking = False  # a wake-up of the caller is scheduled in the loop
        self._tasks: set[asyncio.Task[Answer]] = set()
        self._closed = False
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="model-calls")
        self._thread.daemon = True
        self._thread.start()
        self.asker: Asker = self._call(self._asker(share, node, on_attempt))

    async def _asker(
        self, share: int | None, node: str, on_attempt: Callable[[], Awaitable[None]] | None
    ) -> Asker:
        return Asker(self.endpoint, share=share, node=node, on_attempt=on_attempt)  # in its loop

    # -- the caller's thread --------------------------------------------------------------------

    @property
    def held(self) -> int:
        """Slots of the endpoint this runner holds now."""
        return self.asker.held

    def submit(self, asks: Iterable[Ask]) -> None:
        """Start the asks (non-blocking; one wake-up of the loop thread per batch)."""
        batch = list(asks)
        if batch:
            self.pending += len(batch)
            self._loop.call_soon_threadsafe(self._spawn, batch)

    def take(self, wait: float = 0.0) -> list[Answer]:
        """The answers finished so far (waiting up to ``wait`` seconds for one when there are
        none). An ask that raised (a bug, or Redis down under the limiter) comes back with
        its ``error``."""
        if not self._finished and wait > 0:
            self._ready.wait(wait)
        self._ready.clear()  # before reading: an answer finished after this wakes the next wait
        answers = []
        while self._finished:
            ask, task = self._finished.popleft()
            self.pending -= 1
            if task.cancelled():
                answers.append(Answer(ask.handle, None))
            elif (error := task.exception()) is not None:
                answers.append(Answer(ask.handle, None, error=error))
            else:
                answers.append(task.result())
        return answers

    def run(self, asks: Iterable[Ask]) -> Iterator[Answer]:
        """Submit the asks and yield each answer as it comes; raises what an ask raised."""
        self.submit(asks)
        while self.pending:
            for answer in self.take(wait=WAIT_S):
                if answer.error is not None:
                    raise answer.error
                yield answer

    def stop(self) -> None:
        """Ask nothing new: asks waiting for a slot come back not asked; those on the wire
        finish."""
        self._loop.call_soon_threadsafe(self.asker.stop)

    def wind_down(self, grace_s: float) -> Iterator[Answer]:
        """Stop, then yield the answers still coming, for at most ``grace_s`` seconds."""
        self.stop()
        deadline = time.monotonic() + grace_s
        while self.pending and time.monotonic() < deadline:
            yield from self.take(wait=max(0.0, min(WAIT_S, deadline - time.monotonic())))

    def close(self) -> None:
        """Cancel what still runs, close the loop's clients and limiter (its slots go back)
        and end the thread."""
        if self._closed:
            return
        self._closed = True
        try:
            self._call(self._shutdown(), timeout=2 * SHUTDOWN_S + 10)
        except concurrent.futures.TimeoutError:
            logger.warning("the model-call loop did not close; its thread is left to end")
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
            if not self._loop.is_running():
                self._loop.close()

    def __enter__(self) -> Runner:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _call(self, coroutine: Coroutine[Any, Any, T], timeout: float = 30.0) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout)

    # -- the loop thread ------------------------------------------------------------------------

    def _spawn(self, batch: list[Ask]) -> None:
        """One task per ask."""
        for ask in batch:
            task = self._loop.create_task(self.asker.ask(ask))
            self._tasks.add(task)
            task.add_done_callback(partial(self._done, ask))

    def _done(self, ask: Ask, task: asyncio.Task[Answer]) -> None:
        self._tasks.discard(task)
        self._finished.append((ask, task))  # handed over
        if not self._waking:  # one wake-up for every answer this turn of the loop finishes
            self._waking = True
            self._loop.call_soon(self._wake)

    def _wake(self) -> None:
        self._waking = False
        self._ready.set()

    async def _shutdown(self) -> None:
        await cancel_all([t for t in asyncio.all_tasks() if t is not asyncio.current_task()])
        await self.asker.close()


async def cancel_all(tasks: Collection[asyncio.Task[Any]]) -> None:
    """Cancel the tasks and wait for them (at most ``SHUTDOWN_S``), their errors retrieved."""
    for task in tasks:
        task.cancel()
    if tasks:
        done, pending = await asyncio.wait(tasks, timeout=SHUTDOWN_S)
        for task in done:  # retrieved, so that none is logged as never retrieved
            if not task.cancelled():
                task.exception()
        if pending:
            logger.warning("%d model-call tasks did not stop; left", len(pending))
