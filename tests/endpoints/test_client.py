"""The endpoint client (every model call): the real ``openai`` async client against the local
fake server, its retries and its limits."""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import math
import random
import socket
import ssl
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import limits.storage
import openai
import pytest
from hypothesis import given
from hypothesis import strategies as st

from apps.endpoints import client as llm_client
from apps.endpoints.cache_key import cache_key
from apps.endpoints.client import (
    CallOutcome,
    EndpointConfig,
    SamplingParams,
    call_cache_key,
    close_clients,
    complete,
)
from apps.endpoints.limiter import (
    RATE_WINDOW_S,
    LimiterRegistry,
    WindowRate,
    configure_limits,
    limits_reset,
)
from apps.endpoints.retry import RetryPolicy, backoff_delay, retry_after_seconds
from apps.judging.parsers import Scale, get_parser, geval_logprob_score, score_token_top_logprobs
from tests.fakes.fixtures import fake_openai_server as fake_openai_server  # the shared fixture
from tests.fakes.openai_server import FakeOpenAIServer, Fault, Reply, spawn_fake_server

T = TypeVar("T")
FAST = RetryPolicy(max_attempts=4, base_backoff_s=0.01, max_backoff_s=0.05)


@pytest.fixture(autouse=True, scope="module")
def local_limits() -> Iterator[None]:
    """The client's own tests: limits within the process unless a test shares them (Redis)."""
    configure_limits(None)
    yield
    limits_reset()


def run(make: Callable[[], Awaitable[T]]) -> T:
    """Run a coroutine in a fresh loop, closing the loop's cached clients afterwards."""

    async def main() -> T:
        try:
            return await make()
        finally:
            await close_clients()

    return asyncio.run(main())


def endpoint_for(server: FakeOpenAIServer, **overrides: Any) -> EndpointConfig:
    options: dict[str, Any] = {
        "base_url": server.base_url,
        "model": "judge-model",
        "timeout_s": 2.0,  # generous: only the hang tests need a short one
        "retry": FAST,
    }
    options.update(overrides)
    return EndpointConfig(**options)


def call(server: FakeOpenAIServer, prompt: str = "Rate this.", **overrides: Any) -> CallOutcome:
    params = overrides.pop("params", SamplingParams(max_tokens=32))
    endpoint = endpoint_for(server, **overrides)
    return run(lambda: complete(endpoint, prompt, params))


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as fake:
        yield fake


def test_the_sdk_client_of_the_batch_interface_speaks_aiohttp(server: FakeOpenAIServer) -> None:
    async def http_client() -> object:
        try:
            return llm_client.client_for(endpoint_for(server), "key")._client
        finally:
            await llm_client.close_clients()

    assert isinstance(run(http_client), openai.DefaultAioHttpClient)
    assert call(server).ok


def test_clients_read_the_certificate_bundle_once_and_verify_servers(
    server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    import httpx2

    loads: list[int] = []  # contexts built from the certificate bundle (not given one)
    default = httpx2.create_ssl_context

    def counted(verify: Any = True, **kwargs: Any) -> Any:
        if not isinstance(verify, ssl.SSLContext):
            loads.append(1)
        return default(verify, **kwargs)

    monkeypatch.setattr(httpx2, "create_ssl_context", counted)
    llm_client.tls_context.cache_clear()
    try:
        for _ in range(3):  # a task's loop each: its clients are made anew
            assert call(server).ok
        assert len(loads) == 1  # not once per client (16-33 ms each)
        context = llm_client.tls_context()
        assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    finally:
        llm_client.tls_context.cache_clear()


# -- success ----------------------------------------------------------------------------------


def test_success_records_text_tokens_request_id_and_fingerprint(server: FakeOpenAIServer) -> None:
    server.reply = lambda request: "Analysis: clear and fluent.\nRating: 4"
    outcome = call(server, "Evaluate the fluency of: the cat sat on the mat")
    assert outcome.ok
    assert outcome.text == "Analysis: clear and fluent.\nRating: 4"
    assert outcome.attempts == 1
    assert outcome.prompt_tokens == 10  # whitespace tokens, as the fake counts
    assert outcome.completion_tokens == 6
    assert outcome.request_id == server.requests[0].request_id
    assert outcome.system_fingerprint == "fp_fake_0001"
    assert outcome.model == "judge-model"
    assert outcome.finish_reason == "stop"
    assert outcome.error_kind is None
    assert outcome.latency_s is not None and 0 < outcome.latency_s <= outcome.total_s
    assert get_parser("analysis_rating").parse(outcome.text).score == 4.0


def test_the_shared_fixture_serves(fake_openai_server: FakeOpenAIServer) -> None:
    outcome = call(fake_openai_server)
    assert outcome.ok
    assert fake_openai_server.request_count == 1


def test_request_body_always_bounds_max_tokens(server: FakeOpenAIServer) -> None:
    call(server, params=SamplingParams())
    params = SamplingParams(max_tokens=7, temperature=1.0, top_p=0.9, seed=3, stop=("\n\n",))
    call(server, params=params)
    call(server, params=SamplingParams(max_tokens=9), max_tokens_param="max_completion_tokens")
    bodies = [r.json for r in server.requests]
    assert bodies[0]["max_tokens"] == 512
    assert bodies[0]["messages"] == [{"role": "user", "content": "Rate this."}]
    assert bodies[0]["temperature"] == 0.0
    assert "logprobs" not in bodies[0] and "seed" not in bodies[0]
    assert bodies[1] | {"messages": None} == {
        "model": "judge-model",
        "messages": None,
        "max_tokens": 7,
        "temperature": 1.0,
        "top_p": 0.9,
        "seed": 3,
        "stop": ["\n\n"],
    }
    assert bodies[2]["max_completion_tokens"] == 9 and "max_tokens" not in bodies[2]


def test_chat_messages_are_sent_as_given(server: FakeOpenAIServer) -> None:
    messages = [
        {"role": "system", "content": "You are a strict judge."},
        {"role": "user", "content": "Rate: hello"},
    ]
    endpoint = endpoint_for(server)
    outcome = run(lambda: complete(endpoint, messages, SamplingParams()))
    assert outcome.ok
    assert server.requests[0].json["messages"] == messages


def test_truncated_reply_reports_length(server: FakeOpenAIServer) -> None:
    server.reply = lambda request: "Analysis: one two three four five six.\nRating: 3"
    outcome = call(server, params=SamplingParams(max_tokens=3))
    assert outcome.ok
    assert outcome.finish_reason == "length"
    assert outcome.completion_tokens == 3


def test_empty_reply_is_kept_and_left_unparsed(server: FakeOpenAIServer) -> None:
    server.reply = lambda request: ""
    outcome = call(server)
    assert outcome.ok and outcome.text == ""
    assert get_parser("analysis_rating").parse(outcome.text).reason == "empty reply"


# -- retries ----------------------------------------------------------------------------------


def test_429_waits_for_retry_after_then_succeeds(server: FakeOpenAIServer) -> None:
    server.enqueue(Fault.rate_limit(retry_after="0.5"))
    outcome = call(server)
    assert outcome.ok
    assert outcome.attempts == 2
    first, second = server.requests
    waited = second.received_at - first.received_at
    assert 0.5 <= waited < 1.0  # Retry-After plus at most 10% jitter and some scheduling
    assert 0.5 <= outcome.total_s < 1.5


def test_retry_after_as_http_date_is_honoured(server: FakeOpenAIServer) -> None:
    when = datetime.now(UTC) + timedelta(seconds=30)
    server.enqueue(Fault.rate_limit(retry_after=email.utils.format_datetime(when, usegmt=True)))
    slept: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        slept.append(seconds)

    endpoint = endpoint_for(server)
    outcome = run(lambda: complete(endpoint, "x", SamplingParams(), sleep=fake_sleep))
    assert outcome.ok and outcome.attempts == 2
    assert len(slept) == 1
    assert 28.0 <= slept[0] <= 30.0 * 1.1 + 1.0


def test_retry_after_beyond_the_limit_gives_up_at_once(server: FakeOpenAIServer) -> None:
    server.enqueue(Fault.rate_limit(retry_after="3600"))
    outcome = call(server)
    assert not outcome.ok
    assert outcome.error_kind == "rate_limited"
    assert outcome.status_code == 429
    assert outcome.attempts == 1
    assert server.request_count == 1
    assert "Rate limit reached" in (outcome.error_message or "")  # the provider's words
    assert "retry after 3600 s, beyond the 120 s we wait at most" in (outcome.error_message or "")


def test_a_reply_dripping_a_byte_every_half_second_ends_at_the_timeout(
    server: FakeOpenAIServer,
) -> None:
    """The timeout bounds the whole attempt (connect + send + receive), not the wait between
    bytes: each dripping attempt ends at the judge's timeout and is retried up to the limit."""
    server.add_rule(lambda request: True, Fault.drip(0.5))
    started = time.perf_counter()
    outcome = call(server, timeout_s=2.0, retry=RetryPolicy(max_attempts=2, base_backoff_s=0.01))
    elapsed = time.perf_counter() - started
    assert not outcome.ok and outcome.error_kind == "timeout"
    assert "no complete reply within the judge's timeout of 2 s" in (outcome.error_message or "")
    assert outcome.attempts == 2 and server.request_count == 2
    assert outcome.latency_s is not None and 1.0 <= outcome.latency_s <= 3.0
    assert 3.0 <= elapsed <= 6.0
    first, second = server.requests
    assert 1.0 <= second.received_at - first.received_at <= 3.2


def test_500s_give_up_after_bounded_attempts(server: FakeOpenAIServer) -> None:
    server.enqueue(*[Fault.server_error()] * 10)
    outcome = call(server, retry=RetryPolicy(max_attempts=3, base_backoff_s=0.01))
    assert not outcome.ok
    assert outcome.error_kind == "server_error"
    assert outcome.status_code == 500
    assert outcome.attempts == 3
    assert server.request_count == 3
    assert outcome.request_id == server.requests[-1].request_id


def test_backoff_is_full_jitter_and_capped(server: FakeOpenAIServer) -> None:
    policy = RetryPolicy(max_attempts=5, base_backoff_s=1.0, max_backoff_s=3.0)
    server.enqueue(*[Fault.server_error(503)] * 4)
    slept: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        slept.append(seconds)

    endpoint = endpoint_for(server, retry=policy)
    rng = random.Random(7)
    outcome = run(lambda: complete(endpoint, "x", SamplingParams(), sleep=fake_sleep, rng=rng))
    assert outcome.ok and outcome.attempts == 5
    ceilings = [1.0, 2.0, 3.0, 3.0]
    assert all(0.0 <= s <= c for s, c in zip(slept, ceilings, strict=True))
    draws = [backoff_delay(policy, k, random.Random(1)) for k in range(1, 40)]
    assert max(draws) <= 3.0 and min(draws) >= 0.0


def test_client_errors_fail_at_once(server: FakeOpenAIServer) -> None:
    server.enqueue(Fault.error(400, "Invalid value for 'temperature'"))
    outcome = call(server)
    assert not outcome.ok
    assert outcome.error_kind == "client_error"
    assert outcome.status_code == 400
    assert outcome.attempts == 1
    assert "temperature" in (outcome.error_message or "")
    assert server.request_count == 1


def test_server_can_forbid_a_retry(server: FakeOpenAIServer) -> None:
    server.enqueue(Fault.error(503, "overloaded", **{"x-should-retry": "false"}))
    outcome = call(server)
    assert outcome.error_kind == "server_error" and outcome.attempts == 1


def test_garbage_json_body_is_an_invalid_response(server: FakeOpenAIServer) -> None:
    server.enqueue(Fault.garbage_json())
    outcome = call(server)
    assert not outcome.ok
    assert outcome.error_kind == "invalid_response"
    assert outcome.attempts == 1
    assert server.request_count == 1


def test_non_json_body_is_an_invalid_response(server: FakeOpenAIServer) -> None:
    server.enqueue(Fault.non_json())
    outcome = call(server)
    assert outcome.error_kind == "invalid_response"
    assert "expected a JSON ChatCompletion" in (outcome.error_message or "")


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (
            '{"error": {"message": "The model is overloaded"}}',
            "the provider answered with an error: The model is overloaded",
        ),
        ('{"error": "quota exceeded"}', "the provider answered with an error: quota exceeded"),
        ('{"id": "x", "choices": []}', "not a completion: 'choices' is [] in the reply"),
        ('{"id": "x"}', "not a completion: no 'choices' in the reply"),
        ('{"id": "x", "choices": [{"message": null}]}', "the first choice has no 'message'"),
        ('[{"choices": []}]', "expected a JSON ChatCompletion, got list"),
        ('"Rating: 5"', "expected a JSON ChatCompletion, got str"),
    ],
)
def test_json_that_is_not_a_completion_is_an_invalid_response(
    server: FakeOpenAIServer, body: str, reason: str
) -> None:
    server.enqueue(Fault.json_body(body))
    outcome = call(server)
    assert not outcome.ok and outcome.text is None  # never read as a reply, let alone a score
    assert outcome.error_kind == "invalid_response"
    assert reason in (outcome.error_message or "")


def test_a_null_content_is_an_empty_reply(server: FakeOpenAIServer) -> None:
    body = {
        "id": "x",
        "model": "judge-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": None}}],
    }
    server.enqueue(Fault.json_body(json.dumps(body)))
    outcome = call(server)
    assert outcome.ok and outcome.text == ""  # kept, and left unparsed by the reader
    assert outcome.prompt_tokens is None and outcome.finish_reason is None


def test_invalid_responses_can_be_retried_when_asked(server: FakeOpenAIServer) -> None:
    server.enqueue(Fault.garbage_json())
    outcome = call(server, retry=RetryPolicy(base_backoff_s=0.01, retry_invalid_response=True))
    assert outcome.ok and outcome.attempts == 2


def test_hang_times_out_then_the_retry_succeeds(server: FakeOpenAIServer) -> None:
    server.enqueue(Fault.hang(5.0))
    outcome = call(server, timeout_s=0.3)
    assert outcome.ok
    assert outcome.attempts == 2
    assert server.request_count == 2
    assert 0.3 <= outcome.total_s < 2.0


def test_endless_hang_ends_as_a_timeout(server: FakeOpenAIServer) -> None:
    server.add_rule(lambda request: True, Fault.hang(5.0))
    started = time.perf_counter()
    outcome = call(server, timeout_s=0.2, retry=RetryPolicy(max_attempts=2, base_backoff_s=0.01))
    assert not outcome.ok
    assert outcome.error_kind == "timeout"
    assert outcome.attempts == 2
    assert time.perf_counter() - started < 2.0


def test_slow_reply_within_the_timeout_is_fine(server: FakeOpenAIServer) -> None:
    server.enqueue(Fault.slow(0.1))
    outcome = call(server, timeout_s=1.0)
    assert outcome.ok and outcome.attempts == 1
    assert outcome.latency_s is not None and outcome.latency_s >= 0.1


def test_dropped_connection_is_retried(server: FakeOpenAIServer) -> None:
    server.enqueue(Fault.disconnect())
    outcome = call(server)
    assert outcome.ok and outcome.attempts == 2


def test_refused_connection_fails_after_bounded_attempts() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    endpoint = EndpointConfig(
        base_url=f"http://127.0.0.1:{port}/v1",
        model="m",
        timeout_s=0.3,
        retry=RetryPolicy(max_attempts=3, base_backoff_s=0.01),
    )
    outcome = run(lambda: complete(endpoint, "x", SamplingParams()))
    assert not outcome.ok
    assert outcome.error_kind == "connection"
    assert outcome.attempts == 3


# -- API keys ---------------------------------------------------------------------------------


def test_api_key_comes_from_the_named_env_var(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    secret = "sk-test-discern-0123456789"
    monkeypatch.setenv("DISCERN_KEY_TEST_JUDGE", secret)
    caplog.set_level(logging.DEBUG)
    with FakeOpenAIServer(api_key=secret) as server:
        good = call(server, api_key_env="DISCERN_KEY_TEST_JUDGE")
        monkeypatch.setenv("DISCERN_KEY_TEST_JUDGE", "sk-wrong-key-9876543210")
        bad = call(server, api_key_env="DISCERN_KEY_TEST_JUDGE")
    assert good.ok
    assert server.requests[0].headers["authorization"] == f"Bearer {secret}"
    assert not bad.ok and bad.error_kind == "auth" and bad.attempts == 1
    everything = caplog.text + repr(good) + repr(bad)
    assert secret not in everything and "sk-wrong-key-9876543210" not in everything


def test_a_reply_or_error_that_repeats_the_key_leaves_masked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    secret = "sk-test-discern-echoed-0123456789"
    monkeypatch.setenv("DISCERN_KEY_TEST_ECHO", secret)
    with FakeOpenAIServer(api_key=secret) as server:
        server.enqueue(
            Fault.reply(f"You sent: Authorization: Bearer {secret}\nRating: 4 ({secret})"),
            Fault.error(400, f"Invalid request from key {secret}"),
        )
        echoed = call(server, api_key_env="DISCERN_KEY_TEST_ECHO")
        refused = call(server, api_key_env="DISCERN_KEY_TEST_ECHO")
    assert echoed.ok
    assert echoed.text == "You sent: Authorization: Bearer ***\nRating: 4 (***)"
    assert not refused.ok and refused.error_kind == "client_error"
    assert "Invalid request from key ***" in (refused.error_message or "")
    assert secret not in repr(echoed) + repr(refused)


def test_a_keyless_endpoint_masks_nothing(server: FakeOpenAIServer) -> None:
    """A local server needs no key: the placeholder sent in its place is not a secret."""
    server.enqueue(Fault.reply(f"Rating: 4, {llm_client.NO_KEY_PLACEHOLDER}"))
    outcome = call(server)
    assert outcome.text == f"Rating: 4, {llm_client.NO_KEY_PLACEHOLDER}"


def test_missing_env_var_fails_without_calling(
    server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DISCERN_KEY_TEST_ABSENT", raising=False)
    outcome = call(server, api_key_env="DISCERN_KEY_TEST_ABSENT")
    assert not outcome.ok
    assert outcome.error_kind == "config"
    assert outcome.attempts == 0
    assert "DISCERN_KEY_TEST_ABSENT" in (outcome.error_message or "")
    assert server.request_count == 0


# -- concurrency and rate limits --------------------------------------------------------------


def test_concurrency_limit_is_never_exceeded() -> None:
    with FakeOpenAIServer(latency=0.05) as server:
        endpoint = endpoint_for(server, max_concurrency=4, name="limited")

        async def many() -> list[CallOutcome]:
            calls = [complete(endpoint, f"item {i}", SamplingParams()) for i in range(40)]
            return list(await asyncio.gather(*calls))

        outcomes = run(many)
    assert all(o.ok for o in outcomes)
    assert server.request_count == 40
    assert server.max_in_flight == 4


def test_slot_is_released_while_waiting_to_retry() -> None:
    with FakeOpenAIServer(latency=0.02) as server:
        server.enqueue(Fault.rate_limit(retry_after="1"))
        endpoint = endpoint_for(server, max_concurrency=1, name="one-slot")

        async def two() -> list[CallOutcome]:
            first = asyncio.create_task(complete(endpoint, "first", SamplingParams()))
            await asyncio.sleep(0.1)  # the first call is now waiting out its Retry-After
            second = await complete(endpoint, "second", SamplingParams())
            return [await first, second]

        first, second = run(two)
    assert first.ok and first.attempts == 2
    assert second.ok and second.total_s < 0.5  # it did not wait for the first call's retry


def test_the_rate_window_admits_its_requests_then_waits_for_the_oldest_to_leave() -> None:
    slept: list[float] = []

    class Waited(Exception):
        pass

    async def fake_sleep(seconds: float) -> None:
        slept.append(seconds)
        raise Waited  # the wait the next request would make, without making it

    window = WindowRate(limits.storage.MemoryStorage(), "rpm-window", 3, sleep=fake_sleep)

    async def four() -> None:
        for _ in range(3):
            await window.acquire()  # a minute's requests at once
        assert slept == []
        with pytest.raises(Waited):
            await window.acquire()

    asyncio.run(four())
    assert slept == [pytest.approx(RATE_WINDOW_S, abs=1.0)]  # until the first one leaves


def test_requests_per_minute_limit_applies_to_calls(server: FakeOpenAIServer) -> None:
    endpoint = endpoint_for(server, requests_per_minute=2, name="rpm")

    async def three() -> list[CallOutcome]:
        calls = [asyncio.ensure_future(complete(endpoint, "x", SamplingParams())) for _ in "abc"]
        done, waiting = await asyncio.wait(calls, timeout=2.0)
        for call in waiting:
            call.cancel()
        return [call.result() for call in done]

    outcomes = run(three)
    assert len(outcomes) == 2 and all(o.ok for o in outcomes)
    assert server.request_count == 2  # the third waits for the minute to pass


# -- Redis-wide limits ------------------------------------------------------------------------


def test_redis_limit_holds_across_processes(redis_url: str) -> None:
    """Two event loops in two threads stand in for two worker processes."""
    with FakeOpenAIServer(latency=0.05) as server:
        endpoint = endpoint_for(server, max_concurrency=3, name="shared")
        configure_limits(redis_url)
        results: list[list[CallOutcome]] = []

        def worker() -> None:
            async def batch() -> list[CallOutcome]:
                calls = [complete(endpoint, f"w {i}", SamplingParams()) for i in range(15)]
                return list(await asyncio.gather(*calls))

            results.append(run(batch))

        try:
            threads = [threading.Thread(target=worker) for _ in range(2)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(30)
        finally:
            configure_limits(None)
    assert [len(r) for r in results] == [15, 15]
    assert all(o.ok for r in results for o in r)
    assert server.request_count == 30
    assert server.max_in_flight == 3


def test_fake_server_in_a_child_process_serves_and_counts() -> None:
    with spawn_fake_server(latency=0.0) as spawned:
        endpoint = EndpointConfig(base_url=spawned.base_url, model="m", timeout_s=5.0)
        outcomes = run(
            lambda: asyncio.gather(*(complete(endpoint, "x", SamplingParams()) for _ in range(5)))
        )
        stats = spawned.stats()
    assert all(o.ok for o in outcomes)
    assert stats["request_count"] == 5 and 1 <= stats["max_in_flight"] <= 5


def test_registry_gives_one_limiter_per_endpoint_and_loop() -> None:
    registry = LimiterRegistry()

    async def same_loop() -> bool:
        return registry.for_endpoint("a", 2) is registry.for_endpoint("a", 2)

    async def get() -> object:
        return registry.for_endpoint("a", 2)

    assert asyncio.run(same_loop())
    assert asyncio.run(get()) is not asyncio.run(get())


# -- logprobs ---------------------------------------------------------------------------------


def test_logprobs_give_a_geval_score(server: FakeOpenAIServer) -> None:
    alternatives = [("4", math.log(0.6)), ("3", math.log(0.3)), ("5", math.log(0.1))]
    server.reply = lambda request: Reply("4", top_logprobs=[alternatives])
    outcome = call(server, params=SamplingParams(max_tokens=1, logprobs=True, top_logprobs=3))
    assert outcome.ok and outcome.logprobs is not None
    assert server.requests[0].json["logprobs"] is True
    assert server.requests[0].json["top_logprobs"] == 3
    top = score_token_top_logprobs(outcome.logprobs, Scale(1, 5))
    assert top is not None
    result = geval_logprob_score(top, Scale(1, 5))
    assert result.score == pytest.approx(3.8)


def test_logprobs_from_the_completions_api(server: FakeOpenAIServer) -> None:
    alternatives = [("2", math.log(0.5)), ("1", math.log(0.5))]
    server.reply = lambda request: Reply("2", top_logprobs=[alternatives])
    params = SamplingParams(max_tokens=1, logprobs=True, top_logprobs=2)
    outcome = call(server, "Score (1-5):", api="completions", params=params)
    assert outcome.ok and outcome.text == "2"
    assert server.requests[0].path == "/v1/completions"
    assert server.requests[0].json["logprobs"] == 2
    top = score_token_top_logprobs(outcome.logprobs or [], Scale(1, 5))
    assert geval_logprob_score(top or [], Scale(1, 5)).score == pytest.approx(1.5)


def test_logprobs_not_asked_not_returned(server: FakeOpenAIServer) -> None:
    assert call(server).logprobs is None


# -- cache keys -------------------------------------------------------------------------------

BASE = {
    "base_url": "http://judge.local/v1",
    "model": "judge-a",
    "params": {"temperature": 0.0, "top_p": None, "max_tokens": 512, "seed": 1, "logprobs": False},
    "messages": [{"role": "user", "content": "Rate this."}],
    "sample_index": 0,
}


def key(**changes: Any) -> str:
    options = {**BASE, **changes}
    return cache_key(**options)


def test_cache_key_is_a_stable_sha256() -> None:
    assert key() == key()
    assert len(key()) == 64 and int(key(), 16) >= 0
    assert key(base_url="http://judge.local/v1/") == key()  # trailing slash
    reordered = dict(reversed(list(BASE["params"].items())))  # type: ignore[attr-defined]
    assert key(params=reordered) == key()
    assert key(params={**BASE["params"], "temperature": 0}) == key()  # type: ignore[dict-item]


@pytest.mark.parametrize(
    "change",
    [
        {"model": "judge-b"},
        {"base_url": "http://other.local/v1"},
        {"sample_index": 1},
        {"messages": [{"role": "user", "content": "Rate this!"}]},
        {"messages": "Rate this."},
        {"params": {**BASE["params"], "temperature": 1.0}},  # type: ignore[dict-item]
        {"params": {**BASE["params"], "top_p": 0.9}},  # type: ignore[dict-item]
        {"params": {**BASE["params"], "max_tokens": 256}},  # type: ignore[dict-item]
        {"params": {**BASE["params"], "seed": 2}},  # type: ignore[dict-item]
        {"params": {**BASE["params"], "logprobs": True}},  # type: ignore[dict-item]
    ],
)
def test_cache_key_changes_with_anything_that_changes_the_reply(change: dict[str, Any]) -> None:
    assert key(**change) != key()


@given(st.integers(0, 10_000), st.integers(0, 10_000))
def test_sample_indices_never_share_a_key(first: int, second: int) -> None:
    assert (key(sample_index=first) == key(sample_index=second)) == (first == second)


def test_call_cache_key_covers_endpoint_and_params() -> None:
    endpoint = EndpointConfig(base_url="http://judge.local/v1", model="judge-a")
    params = SamplingParams(temperature=1.0, seed=4)
    base = call_cache_key(endpoint, "Rate this.", params)
    assert base == call_cache_key(endpoint, "Rate this.", SamplingParams(temperature=1.0, seed=4))
    others = {
        call_cache_key(
            endpoint, "Rate this.", SamplingParams(temperature=1.0, seed=4, sample_index=1)
        ),
        call_cache_key(
            EndpointConfig(base_url="http://judge.local/v1", model="judge-b"), "Rate this.", params
        ),
        call_cache_key(endpoint, "Rate this.", SamplingParams(temperature=1.0, seed=5)),
        call_cache_key(
            endpoint, "Rate this.", SamplingParams(temperature=1.0, seed=4, max_tokens=8)
        ),
        call_cache_key(
            EndpointConfig(base_url="http://judge.local/v1", model="judge-a", api="completions"),
            "Rate this.",
            params,
        ),
    }
    assert base not in others and len(others) == 5


# -- retry helpers ----------------------------------------------------------------------------


def test_retry_after_parsing() -> None:
    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
    assert retry_after_seconds({"retry-after": "2"}) == 2.0
    assert retry_after_seconds({"Retry-After": "1.5"}) == 1.5
    assert retry_after_seconds({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert retry_after_seconds({"retry-after": "Thu, 01 Jan 2026 12:00:07 GMT"}, now) == 7.0
    assert retry_after_seconds({"retry-after": "Thu, 01 Jan 2026 11:59:00 GMT"}, now) == 0.0
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({"retry-after": "-3"}) is None
    assert retry_after_seconds({}) is None


def test_sampling_params_validation() -> None:
    with pytest.raises(ValueError):
        SamplingParams(max_tokens=0)
    with pytest.raises(ValueError):
        SamplingParams(top_logprobs=3)  # needs logprobs=True
    with pytest.raises(ValueError):
        RetryPolicy(max_attempts=0)
