"""The request side: sampling parameters, an asyncio loop in a helper thread, the gate that
stops calls not yet asked, and one request (with its format retry)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from apps.endpoints.client import EndpointConfig, SamplingParams, complete
from apps.endpoints.limiter import EndpointLimiter
from apps.endpoints.models import Endpoint
from apps.judging.call_results import Reply
from apps.judging.models import JudgeCall, JudgeRun, Strategy
from apps.judging.scoring import ReplyReader

T = TypeVar("T")
logger = logging.getLogger(__name__)
#: How long each step of closing a loop may take (the cancelled tasks, then the clients and
#: limiters) before the work ends anyway: every finished call is saved by then, and reserved
#: slots lapse with their lease.
SHUTDOWN_S = 20.0


def sampling_params(run: JudgeRun, sample_index: int) -> SamplingParams:
    """The run's strategy's settings over its judge's defaults (``strategy_params``)."""
    assert run.strategy is not None and run.judge.endpoint is not None
    return strategy_params(run.strategy, run.judge.endpoint, sample_index)


def strategy_params(strategy: Strategy, endpoint: Endpoint, sample_index: int) -> SamplingParams:
    """The strategy's settings over the endpoint's defaults. A fixed seed is offset by the
    sample index, or the R samples of one prompt would be copies of each other."""
    defaults: dict[str, Any] = endpoint.default_params or {}
    seed = defaults.get("seed")
    temperature = strategy.temperature
    if temperature is None:
        temperature = defaults.get("temperature", 0.0)
    stop = defaults.get("stop")
    return SamplingParams(
        max_tokens=strategy.max_tokens,
        temperature=temperature,
        top_p=defaults.get("top_p"),
        seed=int(seed) + sample_index if seed is not None else None,
        logprobs=strategy.use_logprobs,
        top_logprobs=strategy.top_logprobs if strategy.use_logprobs else None,
        stop=tuple(stop) if isinstance(stop, list) else ((stop,) if stop else None),
        sample_index=sample_index,
    )


class AsyncLoop:
    """An asyncio event loop in a daemon thread; coroutines are submitted from outside."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="judge-calls")
        self._thread.daemon = True
        self._thread.start()

    def submit(self, coroutine: Awaitable[T]) -> concurrent.futures.Future[T]:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop)  # type: ignore[arg-type]

    def call(self, coroutine: Awaitable[T], timeout: float = 30.0) -> T:
        return self.submit(coroutine).result(timeout)

    def close(self, cleanup: Callable[[], Awaitable[Any]]) -> None:
        async def shutdown() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            if tasks:
                done, pending = await asyncio.wait(tasks, timeout=SHUTDOWN_S)
                for task in done:  # retrieved, so that none is logged as never retrieved
                    if not task.cancelled():
                        task.exception()
                if pending:
                    logger.warning("%d judge-call tasks did not stop; left", len(pending))
            try:
                await asyncio.wait_for(cleanup(), SHUTDOWN_S)
            except TimeoutError:
                logger.warning("closing the judge-call clients took over %.0f s", SHUTDOWN_S)

        try:
            self.call(shutdown(), timeout=2 * SHUTDOWN_S + 10)
        except concurrent.futures.TimeoutError:
            logger.warning("the judge-call loop did not close; its thread is left to end")
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(10)
            if not self.loop.is_running():
                self.loop.close()


@dataclass
class Prepared:
    call: JudgeCall
    messages: list[dict[str, str]]
    params: SamplingParams
    key: str


@dataclass
class Gate:
    """Admits a call once it holds one of the endpoint's slots (for all its attempts and its
    format retry); once the run is stopping, none: calls waiting for a slot (``waiting``) are
    cancelled and stay pending, calls already asked finish."""

    stopping: asyncio.Event = field(default_factory=asyncio.Event)
    waiting: set[asyncio.Task[Any]] = field(default_factory=set)

    def stop(self) -> None:
        """In the loop thread."""
        self.stopping.set()
        for task in list(self.waiting):
            task.cancel()


async def _ask(
    endpoint: EndpointConfig,
    limiter: EndpointLimiter,
    gate: Gate,
    reader: ReplyReader,
    prepared: Prepared,
    on_attempt: Callable[[], Awaitable[None]] | None = None,
) -> Reply | None:
    """One call; None if the run stopped before it was asked (it stays pending)."""
    task = asyncio.current_task()
    assert task is not None
    gate.waiting.add(task)
    try:
        async with limiter.call():
            gate.waiting.discard(task)
            if gate.stopping.is_set():
                return None  # cancelled before it was asked: stays pending
            return await _ask_now(endpoint, limiter, reader, prepared, on_attempt)
    finally:
        gate.waiting.discard(task)


async def _ask_now(
    endpoint: EndpointConfig,
    limiter: EndpointLimiter,
    reader: ReplyReader,
    prepared: Prepared,
    on_attempt: Callable[[], Awaitable[None]] | None = None,
) -> Reply:
    outcome = await complete(
        endpoint, prepared.messages, prepared.params, limiter=limiter, on_attempt=on_attempt
    )
    if (
        not (outcome.ok and reader.format_retry)
        or reader.read(outcome.text or "", outcome.logprobs).parsed
    ):
        return Reply(outcome)
    messages = reader.retry_messages(prepared.messages, outcome.text or "")
    second = await complete(
        endpoint, messages, prepared.params, limiter=limiter, on_attempt=on_attempt
    )
    return Reply(outcome, second, messages)
