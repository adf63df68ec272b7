"""The batch runner (``apps.endpoints.runner``): every batch of model calls goes through it,
against the local fake server: one answer per ask, under the endpoint's limits, the format
retry, and a stop that asks nothing new but keeps the calls on the wire."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from apps.endpoints.client import EndpointConfig, SamplingParams
from apps.endpoints.limiter import configure_limits, limits_reset
from apps.endpoints.retry import RetryPolicy
from apps.endpoints.runner import Ask, Runner
from tests.fakes.fixtures import fake_openai_server as fake_openai_server  # the shared fixture
from tests.fakes.openai_server import FakeOpenAIServer, Fault

PARAMS = SamplingParams(max_tokens=16)
FAST = RetryPolicy(max_attempts=3, base_backoff_s=0.01, max_backoff_s=0.05)


@pytest.fixture(autouse=True, scope="module")
def local_limits() -> Iterator[None]:
    configure_limits(None)
    yield
    limits_reset()


def endpoint_for(server: FakeOpenAIServer, **overrides: Any) -> EndpointConfig:
    options: dict[str, Any] = {"base_url": server.base_url, "model": "m", "retry": FAST}
    return EndpointConfig(**{**options, **overrides})


def question(number: int) -> list[dict[str, str]]:
    return [{"role": "user", "content": f"Question {number}"}]


def asked_about(number: int):
    return lambda request: f"Question {number}" in str(request.json)


FRESH_WORKER = """
import os, sys, time
import django
django.setup()
from apps.endpoints.client import EndpointConfig, SamplingParams
from apps.endpoints.retry import RetryPolicy
from apps.endpoints.runner import Ask, Runner
retry = RetryPolicy(max_attempts=3, base_backoff_s=0.01, max_backoff_s=0.05)
endpoint = EndpointConfig(base_url=sys.argv[1], model="m", retry=retry)
with Runner(endpoint) as runner:
    list(runner.run([Ask("warm", [{"role": "user", "content": "warm"}], SamplingParams())]))
    started = time.perf_counter()
    asks = [Ask(n, [{"role": "user", "content": f"Question {n}"}], SamplingParams()) for n in (1, 2)]
    answers = {a.handle: a for a in runner.run(asks)}
print(answers[1].attempts, answers[2].outcome.ok, round(time.perf_counter() - started, 3))
print("openai" in sys.modules)
"""


def test_a_worker_s_first_failed_call_holds_up_no_other_call(fake_openai_server):
    """Run as a worker starts, in a new interpreter: its first failed call once imported the
    SDK (about a second) in the loop, and every other call of the loop waited for it."""
    fake_openai_server.add_rule(asked_about(1), Fault.server_error(), times=1)
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "PYTHONPATH": str(root)}
    command = [sys.executable, "-c", FRESH_WORKER, fake_openai_server.base_url]
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    attempts, ok, seconds = done.stdout.split("\n")[0].split()
    assert (attempts, ok) == ("2", "True")  # failed once, then answered; the other answered
    assert float(seconds) < 0.3, seconds
    assert done.stdout.split("\n")[1] == "False"  # the SDK was never imported


def test_each_ask_gets_one_answer_as_it_comes(fake_openai_server):
    fake_openai_server.add_rule(asked_about(0), Fault.slow(0.5), times=1)
    fake_openai_server.add_rule(asked_about(1), Fault.server_error(), times=1)
    counted = []

    async def on_attempt() -> None:
        counted.append(1)

    with Runner(endpoint_for(fake_openai_server), on_attempt=on_attempt) as runner:
        answers = list(runner.run(Ask(n, question(n), PARAMS) for n in range(3)))
    assert answers[-1].handle == 0  # the slow one, last: the others did not wait for it
    assert sorted(a.handle for a in answers) == [0, 1, 2]
    assert all(a.asked and a.outcome.ok and a.retry is None for a in answers)
    assert {a.handle: a.attempts for a in answers} == {0: 1, 1: 2, 2: 1}  # the retry inside
    assert len(counted) == fake_openai_server.request_count == 4


def test_a_reply_in_the_wrong_format_is_asked_once_more(fake_openai_server):
    fake_openai_server.enqueue(Fault.reply("no rating here"), Fault.reply("still none"))

    def reminded(messages: list[dict[str, str]], text: str) -> list[dict[str, str]]:
        return [*messages, {"role": "assistant", "content": text}, {"role": "user", "content": "!"}]

    ask = Ask("x", question(0), PARAMS, lambda text, logprobs: "Rating" in text, reminded)
    with Runner(endpoint_for(fake_openai_server)) as runner:
        (answer,) = runner.run([ask])
    assert answer.outcome.text == "no rating here" and answer.retry.text == "still none"
    assert answer.retry_messages == reminded(question(0), "no rating here")
    assert answer.attempts == fake_openai_server.request_count == 2  # once more, not again

    fake_openai_server.reset()
    with Runner(endpoint_for(fake_openai_server)) as runner:
        (answer,) = runner.run([ask])  # the default reply has a rating: no retry
    assert answer.retry is None and fake_openai_server.request_count == 1


def test_the_endpoints_concurrency_holds(fake_openai_server):
    fake_openai_server.latency = 0.2
    with Runner(endpoint_for(fake_openai_server, max_concurrency=2)) as runner:
        answers = list(runner.run(Ask(n, question(n), PARAMS) for n in range(6)))
    assert len(answers) == 6 and fake_openai_server.max_in_flight == 2


def test_stop_asks_nothing_new_and_keeps_the_calls_on_the_wire(fake_openai_server):
    fake_openai_server.add_rule(asked_about(0), Fault.slow(1.0), times=1)
    with Runner(endpoint_for(fake_openai_server, max_concurrency=1)) as runner:
        runner.submit(Ask(n, question(n), PARAMS) for n in range(3))
        deadline = time.monotonic() + 5
        while fake_openai_server.in_flight == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert runner.held == 1
        answers = {a.handle: a for a in runner.wind_down(grace_s=10.0)}
        assert runner.pending == 0
        runner.submit([Ask(3, question(3), PARAMS)])  # after the stop: not asked either
        (late,) = runner.run([])
    assert answers[0].asked and answers[0].outcome.ok
    assert not answers[1].asked and not answers[2].asked and not late.asked
    assert fake_openai_server.request_count == 1
