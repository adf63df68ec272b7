"""LLM judges: prompts, the cache, requests through the endpoint's runner, replies saved."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import redis
from django.conf import settings

from apps.endpoints.client import EndpointConfig, SamplingParams, build_request, call_cache_key
from apps.endpoints.runner import Answer, Ask, Runner
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
    """Claims calls, answers cache hits at once, sends the rest to the runner (keeping
    twice as many calls queued there as it holds slots, so they never idle, and no more, so
    the run's last calls are not queued behind one task while another has nothing to do)
    and saves the replies."""

    def __init__(self, run: JudgeRun, token: str, share: int, node: str = "") -> None:
        super().__init__(run, token)
        self.node = node
        strategy, model_endpoint = run.strategy, run.judge.endpoint
        assert strategy is not None and model_endpoint is not None
        self.endpoint = model_endpoint.config()
        self.reader = ReplyReader.for_strategy(strategy)
        self.share = max(1, min(share, self.endpoint.max_concurrency))
        self.in_flight: dict[str, list[Prepared]] = {}
        self.parked: dict[str, list[Prepared]] = {}  # prompts another task of the run asks
        self.runner: Runner | None = None
        redis_url = getattr(settings, "REDIS_URL", "")
        sync = redis.Redis.from_url(redis_url) if redis_url else None
        self.counter = RequestCounter(run_identity(run), token)
        self.prompts = PromptClaims(run_identity(run), token, sync)
        self.outage: BaseException | None = None  # Redis went away under an ask
        self.idle = False  # nothing to ask for now: its slots are lent
        self._next_unpark = 0.0
        self._progress_at = time.monotonic()
        self.stall_limit_s = stall_limit(self.endpoint)

    # -- preparing and starting calls -----------------------------------------------------------

    def _prepare(self, call: JudgeCall) -> Prepared | None:
        prepared = call_prepare(call, run=self.run, endpoint=self.endpoint)
        if prepared is None:
            self.buffer.append(call)
        return prepared

    def _cached(self, keys: list[str]) -> dict[str, dict[str, Any]]:
        return stored_replies(JudgeCall, keys, CACHE_COLUMNS)

    def start(self, batch: list[JudgeCall]) -> None:
        """Cache hits are filled at once; the rest go to the runner, one request per key."""
        prepared = [p for p in map(self._prepare, batch) if p is not None]
        cached = self._cached(sorted({p.key for p in prepared}))
        fresh: dict[str, list[Prepared]] = {}
        for item in prepared:
            if item.key in cached:
                fill_from_cache(item.call, cached[item.key], self.reader)
                self.buffer.append(item.call)
            elif item.key in self.in_flight:
                self.in_flight[item.key].append(item)
            elif item.key in self.parked:
                self.parked[item.key].append(item)
            else:
                fresh.setdefault(item.key, []).append(item)
        self._lead(fresh)

    def _lead(self, groups: dict[str, list[Prepared]]) -> None:
        """Ask the prompts this task wins the claim on; park the others (another task of the
        run asks them: their reply is taken from the cache once it is stored)."""
        won = self.prompts.take(groups)
        for key, group in groups.items():
            if key in won:
                self.in_flight[key] = group
            else:
                self.parked[key] = group
        self._submit([self.in_flight[key][0] for key in groups if key in won])

    def _unpark(self) -> None:
        """Parked prompts: from the cache once stored; asked here if their claim lapsed (the
        other task failed the call or died)."""
        now = time.monotonic()
        if not self.parked or now < self._next_unpark:
            return
        self._next_unpark = now + 0.25
        cached = self._cached(sorted(self.parked))
        for key in cached:
            for item in self.parked.pop(key):
                fill_from_cache(item.call, cached[key], self.reader)
                self.buffer.append(item.call)
            self._progress_at = now
        groups, self.parked = self.parked, {}
        self._lead(groups)

    def _submit(self, items: list[Prepared]) -> None:
        """Hand a batch to the runner (one wake-up of its thread, not one per call)."""
        assert self.runner is not None
        self.runner.submit(map(self._ask, items))

    def _ask(self, item: Prepared) -> Ask:
        """The request, with the strategy's format retry if it has one."""
        if not self.reader.format_retry:
            return Ask(item.key, item.messages, item.params)
        return Ask(item.key, item.messages, item.params, self._parsed, self.reader.retry_messages)

    def _parsed(self, text: str, logprobs: Any) -> bool:
        return self.reader.read(text, logprobs).parsed

    # -- results --------------------------------------------------------------------------------

    def _take(self, reply: Answer) -> None:
        key = reply.handle
        group = self.in_flight.pop(key, [])
        if isinstance(reply.error, REDIS_DOWN):
            self.outage = reply.error  # not sent: its calls stay pending
        elif reply.error is not None:
            raise reply.error
        if not reply.asked or not group:
            return  # never asked (the run was cancelled, or Redis is down): calls stay pending
        self._progress_at = time.monotonic()
        leader, followers = group[0], group[1:]
        fill_from_reply(leader.call, reply, self.reader)
        self.buffer.append(leader.call)
        if leader.call.parse_status == ParseStatus.ERROR:
            if followers:  # errors are never reused: the next one asks itself
                self.in_flight[key] = followers
                self._submit([followers[0]])
            else:
                self.prompts.release([key])
            return
        self.prompts.done(key)
        source = {column: getattr(leader.call, column) for column in CACHE_COLUMNS}
        source["id"] = leader.call.pk
        for follower in followers:
            fill_from_cache(follower.call, source, self.reader)
            self.buffer.append(follower.call)

    def _drain(self, wait: float) -> None:
        """Take every finished request, waiting up to ``wait`` for one (the runner wakes this
        thread when one comes). An ask that raised is a bug or Redis down: it propagates, once
        the other replies are taken."""
        assert self.runner is not None
        for reply in self.runner.take(wait):
            self._take(reply)
        if self.outage is not None:
            raise self.outage

    def _until_due(self) -> float:
        """How long to wait for replies before the loop has something else to do: store the
        replies taken, look at parked prompts, check the run's status."""
        due = min(self._last_flush + FLUSH_EVERY_S, self._next_status)
        if self.parked:
            due = min(due, self._next_unpark)
        return max(0.0, due - time.monotonic())

    def _window(self) -> int:
        """Calls to keep queued: twice the slots held (more once it borrows some)."""
        held = self.runner.held if self.runner is not None else self.share
        return max(8, 2 * max(held, 1))

    def _waiting(self) -> int:
        groups = [*self.in_flight.values(), *self.parked.values()]
        return sum(len(group) for group in groups)

    def _watch(self) -> None:
        """A run whose calls make no progress fails with the reason, whatever its heartbeat:
        every attempt has a deadline, so this means the calls are stuck in this process."""
        holds = self.runner.held if self.runner is not None else self.share
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
            assert self.runner is not None
            self.idle = idle
            self.runner.idle(idle)

    def requests_report(self) -> tuple[int, int]:
        return self.counter.report()

    def renew(self) -> None:
        super().renew()
        self.prompts.renew()

    # -- the main loop -------------------------------------------------------------------------

    def run_all(self) -> None:
        self.runner = Runner(
            self.endpoint, share=self.share, node=self.node, on_attempt=self.counter.count
        )
        try:
            self.counter.shared = self.runner.limiter.redis
            try:
                self._main()
            except REDIS_DOWN:  # the worker task waits for Redis, then works on
                self._wind_down(self.runner, self.endpoint.timeout_s + 1.0)
                raise
            if self.cancelled:
                self._wind_down(self.runner, CANCEL_GRACE_S)
        finally:
            try:
                self.runner.close()  # cancels whatever is still running; slots go back
            finally:
                self.finish()
                self.prompts.release(list(self.prompts.held))

    def _wind_down(self, runner: Runner, grace_s: float) -> None:
        """Cancelled, or Redis away: ask nothing new, keep the replies of calls already on the
        wire (paid for)."""
        for reply in runner.wind_down(grace_s):
            self._take(reply)

    def _main(self) -> None:
        exhausted = False
        while True:
            self.tick()
            if self.cancelled:
                return
            window = self._window()
            if not exhausted and self._waiting() < window:
                batch = self.claim(min(500, window))
                if batch:
                    self._idle(False)
                    self.start(batch)
                else:
                    exhausted = True
            self._drain(wait=self._until_due() if self.in_flight else 0.0)
            stale = time.monotonic() - self._last_flush >= FLUSH_EVERY_S
            if self.buffer and (len(self.buffer) >= FLUSH_SIZE or stale or not self.in_flight):
                self.flush()
            self._unpark()
            self._watch()
            if exhausted and not self.in_flight and not self.parked:
                self._idle(True)  # other tasks of the run may be short of slots meanwhile
                if self.wait_for_others():
                    return
                exhausted = False


class RunStalled(Exception):
    """No call of the run finished for far longer than any call can take."""


def stall_limit(endpoint: EndpointConfig) -> float:
    """Longer than any one call can take: every attempt and every wait between them."""
    policy = endpoint.retry
    longest_wait = max(policy.max_backoff_s, policy.max_retry_after_s)
    return policy.max_attempts * (endpoint.timeout_s + longest_wait) + 60.0
