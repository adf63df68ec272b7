"""LLM judges: one coroutine per prompt, from its claim to its save.

``run_all`` runs the work in an event loop (asgiref's ``async_to_sync``: the loop in a
helper thread, while the task's thread does the database work the loop hands it with
``sync_to_async``, which runs it in that thread, in batches: claims, prompts and cache
lookups, saves). Each distinct prompt claimed gets its coroutine: it asks the endpoint
through the runner's core (``Asker``: its slot, attempts and format retry), fills its calls
from the reply and waits until they are saved. The run's own coroutine claims, saves every
``FLUSH_EVERY_S`` or ``FLUSH_SIZE`` calls, watches for cancellation and stalls, and keeps the
leases and prompt claims alive.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

from asgiref.sync import async_to_sync, sync_to_async

from apps.endpoints.client import EndpointConfig, SamplingParams, build_request, call_cache_key
from apps.endpoints.runner import Ask, Asker, cancel_all
from apps.judging import claims
from apps.judging.call_results import CACHE_COLUMNS, fill_error, fill_from_cache, fill_from_reply
from apps.judging.engine.once import PromptClaims, RequestCounter, run_identity
from apps.judging.engine.params import sampling_params
from apps.judging.engine.work import CANCEL_GRACE_S, FLUSH_EVERY_S, FLUSH_SIZE, Work
from apps.judging.models import JudgeCall, JudgeRun, ParseStatus
from apps.judging.prompt_template import TemplateError
from apps.judging.prompting import PromptError, call_messages
from apps.judging.scoring import ReplyReader
from apps.judging.stored_replies import stored_replies
from apps.outages import REDIS_DOWN


@dataclass
class Prepared:
    """A claimed call with its request built: what the runner is asked, keyed by cache key."""

    call: JudgeCall
    messages: list[dict[str, str]]
    params: SamplingParams
    key: str


def call_prepare(call: JudgeCall, *, run: JudgeRun, endpoint: EndpointConfig) -> Prepared | None:
    """Build the call's request and cache key (stored on it); None when its prompt cannot be
    made (the call is then filled as a "prompt" error)."""
    assert run.strategy is not None
    try:
        messages = call_messages(run.strategy, call)
    except (PromptError, TemplateError) as exc:
        fill_error(call, kind="prompt", message=str(exc))
        return None
    params = sampling_params(run, call.sample_index)
    call.request = {
        "endpoint": endpoint.base_url,
        "sample_index": call.sample_index,
        "body": build_request(endpoint, messages, params),
    }
    call.cache_key = call_cache_key(endpoint, messages, params)
    return Prepared(call, messages, params, call.cache_key)


class LlmWork(Work):
    """Claims calls, answers cache hits at once, asks each distinct prompt once in its own
    coroutine (keeping twice as many calls asked or waiting as it holds slots, so they never
    idle, and no more, so the run's last calls are not queued behind one task while another
    has nothing to do) and saves the replies."""

    def __init__(self, run: JudgeRun, token: str, share: int, node: str = "") -> None:
        super().__init__(run, token)
        self.node = node
        strategy, model_endpoint = run.strategy, run.judge.endpoint
        assert strategy is not None and model_endpoint is not None
        self.endpoint = model_endpoint.config()
        self.reader = ReplyReader.for_strategy(strategy)
        self.share = max(1, min(share, self.endpoint.max_concurrency))
        self.in_flight: dict[str, list[Prepared]] = {}  # prompts asked here: their calls
        self.parked: dict[str, list[Prepared]] = {}  # prompts another task of the run asks
        self.asker: Asker | None = None
        self.counter = RequestCounter(run_identity(run), token)
        self.prompts = PromptClaims(run_identity(run), token)
        self.failure: BaseException | None = None  # an ask raised: Redis went away, or a bug
        self.idle = False  # nothing to ask for now: its slots are lent
        self._asking: set[asyncio.Task[None]] = set()
        self._changed = asyncio.Event()  # a reply came, or an ask failed
        self._saved: asyncio.Future[None] | None = None  # done once the buffer is stored
        self._next_unpark = 0.0
        self._progress_at = time.monotonic()
        self.stall_limit_s = stall_limit(self.endpoint)

    def run_all(self) -> None:
        async_to_sync(self._run)()

    # -- claiming (the task's thread prepares, the loop sorts) ----------------------------------

    def _claim_prepared(
        self, limit: int
    ) -> tuple[list[JudgeCall], list[Prepared], dict[str, dict[str, Any]]]:
        """Claim calls and build their requests: the calls whose prompt cannot be made (filled
        as errors), the others, and the stored replies of their prompts."""
        errors, prepared = [], []
        for call in self.claim(limit):
            item = call_prepare(call, run=self.run, endpoint=self.endpoint)
            if item is None:
                errors.append(call)
            else:
                prepared.append(item)
        return errors, prepared, self._cached(sorted({p.key for p in prepared}))

    def _cached(self, keys: list[str]) -> dict[str, dict[str, Any]]:
        return stored_replies(JudgeCall, keys, CACHE_COLUMNS)

    async def _claim(self, limit: int) -> bool:
        """Claim: cache hits are filled at once, the rest asked, one coroutine per prompt;
        False when no call was left to claim."""
        errors, prepared, cached = await sync_to_async(self._claim_prepared)(limit)
        self.buffer.extend(errors)
        fresh: dict[str, list[Prepared]] = {}
        for item in prepared:
            if item.key in cached:
                self._reuse(item, cached[item.key])
            elif item.key in self.in_flight:
                self.in_flight[item.key].append(item)
            elif item.key in self.parked:
                self.parked[item.key].append(item)
            else:
                fresh.setdefault(item.key, []).append(item)
        await self._lead(fresh)
        return bool(errors or prepared)

    def _reuse(self, item: Prepared, source: dict[str, Any]) -> None:
        fill_from_cache(item.call, source, self.reader)
        self.buffer.append(item.call)

    async def _lead(self, groups: dict[str, list[Prepared]]) -> None:
        """Ask the prompts this task wins the claim on; park the others (another task of the
        run asks them: their reply is taken from the cache once it is stored)."""
        won = await self.prompts.take(groups)
        for key, group in groups.items():
            if key not in won:
                self.parked[key] = group
                continue
            self.in_flight[key] = group
            task = asyncio.create_task(self._ask_prompt(key))
            self._asking.add(task)
            task.add_done_callback(self._asking.discard)

    async def _unpark(self) -> None:
        """Parked prompts: from the cache once stored; asked here if their claim lapsed (the
        other task failed the call or died)."""
        now = time.monotonic()
        if not self.parked or now < self._next_unpark:
            return
        self._next_unpark = now + 0.25
        cached = await sync_to_async(self._cached)(sorted(self.parked))
        for key in cached:
            for item in self.parked.pop(key):
                self._reuse(item, cached[key])
            self._progress_at = now
        groups, self.parked = self.parked, {}
        await self._lead(groups)

    # -- one prompt ------------------------------------------------------------------------------

    async def _ask_prompt(self, key: str) -> None:
        """One prompt, from its claim to its save: asked once for every call that shares it
        (more may join while it is asked); a failed reply is never reused: the next call
        asks itself. Calls never asked (stopped, or Redis away) stay pending."""
        assert self.asker is not None
        group = self.in_flight[key]
        while group:
            leader = group[0]
            try:
                reply = await self.asker.ask(self._ask(leader))
            except Exception as error:  # Redis down, or a bug: the run's loop raises it
                self.in_flight.pop(key, None)
                self.failure = self.failure or error
                self._changed.set()
                return
            if not reply.asked:
                self.in_flight.pop(key, None)
                return
            self._progress_at = time.monotonic()
            group.pop(0)
            fill_from_reply(leader.call, reply, self.reader)
            self.buffer.append(leader.call)
            self._changed.set()
            if leader.call.parse_status != ParseStatus.ERROR:
                del self.in_flight[key]
                self.prompts.done(key)
                source = {column: getattr(leader.call, column) for column in CACHE_COLUMNS}
                for follower in group:
                    self._reuse(follower, {**source, "id": leader.call.pk})
                break
        else:
            del self.in_flight[key]
            await self.prompts.release([key])
        await self._stored()

    def _ask(self, item: Prepared) -> Ask:
        """The request, with the strategy's format retry if it has one."""
        if not self.reader.format_retry:
            return Ask(item.key, item.messages, item.params)
        return Ask(item.key, item.messages, item.params, self._parsed, self.reader.retry_messages)

    def _parsed(self, text: str, logprobs: Any) -> bool:
        return self.reader.read(text, logprobs).parsed

    async def _stored(self) -> None:
        """Wait until the buffer, with this coroutine's calls, is saved."""
        if self._saved is None:
            self._saved = asyncio.get_running_loop().create_future()
        await asyncio.shield(self._saved)

    # -- the run's loop -------------------------------------------------------------------------

    async def _run(self) -> None:
        self.asker = Asker(
            self.endpoint, share=self.share, node=self.node, on_attempt=self.counter.count
        )
        self.counter.shared = self.prompts.redis = self.asker.limiter.redis
        try:
            try:
                await self._main()
            except REDIS_DOWN:  # the worker task waits for Redis, then works on
                await self._wind_down(self.endpoint.timeout_s + 1.0)
                raise
            if self.cancelled:
                await self._wind_down(CANCEL_GRACE_S)
        finally:
            try:
                await cancel_all(list(self._asking))  # calls still on the wire stay pending
                await self.prompts.release(list(self.prompts.held))
                await sync_to_async(self.finish)()
            finally:
                await self.asker.close()  # slots go back

    async def _main(self) -> None:
        exhausted = False
        while True:
            await self._tick()
            if self.cancelled:
                return
            window = self._window()
            if not exhausted and self._waiting() < window:
                if await self._claim(min(500, window)):
                    self._idle(False)
                else:
                    exhausted = True
            await self._pause(self._until_due() if self.in_flight or self.parked else 0.0)
            if self.failure is not None:
                raise self.failure
            stale = time.monotonic() - self._last_flush >= FLUSH_EVERY_S
            if self.buffer and (len(self.buffer) >= FLUSH_SIZE or stale or not self.in_flight):
                await self._flush()
            await self._unpark()
            self._watch()
            if exhausted and not self.in_flight and not self.parked:
                self._idle(True)  # other tasks of the run may be short of slots meanwhile
                if await sync_to_async(self.wait_for_others)():
                    return
                exhausted = False

    async def _tick(self) -> None:
        """Cancellation and leases (``Work.tick``, in the task's thread, when due); the
        prompt claims renewed with the leases."""
        now = time.monotonic()
        renewing = now >= self._next_renew
        if renewing or now >= self._next_status:
            await sync_to_async(self.tick)()
        if renewing:
            await self.prompts.renew()

    async def _pause(self, seconds: float) -> None:
        """Wait until a reply comes (however many come this turn) or ``seconds`` pass."""
        if seconds > 0 and not self._changed.is_set():
            timer = asyncio.get_running_loop().call_later(seconds, self._changed.set)
            await self._changed.wait()
            timer.cancel()
        self._changed.clear()

    async def _flush(self) -> None:
        """Save the buffer in the task's thread; the coroutines waiting for it end."""
        batch, self.buffer = self.buffer, []
        saved, self._saved = self._saved, None
        self._last_flush = time.monotonic()
        requests = self.counter.report()
        await sync_to_async(claims.results_save)(
            run_id=self.run.pk, token=self.token, calls=batch, requests=requests
        )
        if saved is not None:
            saved.set_result(None)

    async def _wind_down(self, grace_s: float) -> None:
        """Cancelled, or Redis away: ask nothing new, keep the replies of calls already on the
        wire (paid for)."""
        assert self.asker is not None
        self.asker.stop()
        deadline = time.monotonic() + grace_s
        while self.in_flight and (left := deadline - time.monotonic()) > 0:
            await self._pause(left)

    def _until_due(self) -> float:
        """How long to wait for replies before the loop has something else to do: store the
        replies taken, look at parked prompts, check the run's status."""
        due = self._next_status
        if self.buffer:
            due = min(due, self._last_flush + FLUSH_EVERY_S)
        if self.parked:
            due = min(due, self._next_unpark)
        return max(0.0, due - time.monotonic())

    def _window(self) -> int:
        """Calls to keep asked or waiting: twice the slots held (more once it borrows some)."""
        held = self.asker.held if self.asker is not None else self.share
        return max(8, 2 * max(held, 1))

    def _waiting(self) -> int:
        groups = [*self.in_flight.values(), *self.parked.values()]
        return sum(len(group) for group in groups)

    def _watch(self) -> None:
        """A run whose calls make no progress fails with the reason, whatever its heartbeat:
        every attempt has a deadline, so this means the calls are stuck in this process."""
        holds = self.asker.held if self.asker is not None else self.share
        now = time.monotonic()
        if not self.in_flight or not holds:
            self._progress_at = now
        elif now - self._progress_at > self.stall_limit_s:
            raise RunStalled(
                f"no call finished in {self.stall_limit_s:.0f} s with {len(self.in_flight)} "
                "request(s) in flight; Resume to try again"
            )

    def _idle(self, idle: bool) -> None:
        if idle != self.idle:
            assert self.asker is not None
            self.idle = idle
            self.asker.idle(idle)

    def requests_report(self) -> tuple[int, int]:
        return self.counter.report()


class RunStalled(Exception):
    """No call of the run finished for far longer than any call can take."""


def stall_limit(endpoint: EndpointConfig) -> float:
    """Longer than any one call can take: every attempt and every wait between them."""
    policy = endpoint.retry
    longest_wait = max(policy.max_backoff_s, policy.max_retry_after_s)
    return policy.max_attempts * (endpoint.timeout_s + longest_wait) + 60.0
