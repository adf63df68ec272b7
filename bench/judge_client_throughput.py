"""Model calls side by side in one run: a bare client, our ``complete()`` and the runner (its
core in the caller's loop, and behind a thread).

    .venv/bin/python bench/judge_client_throughput.py [--calls 2000] [--concurrency 32]
        [--latency 0.1] [--rounds 3] [--server process|thread]

The fake OpenAI-compatible server answers every request after ``latency`` seconds, so the ideal
rate is concurrency / latency (32 / 0.1 s = 320 calls/s). Each round sends ``calls`` distinct
prompts three ways, one after the other, to the same server at the same concurrency:

- **bare**: aiohttp alone (a semaphore, a POST, the reply's JSON read): no SDK, no limiter,
  no retry. The floor: what any client costs on this machine;
- **complete**: ``apps.endpoints.client.complete`` (egress check, key, the guarded aiohttp
  session, retry on tenacity, the endpoint's limiter, the reply read), what every model call
  goes through;
- **asker**: the same asks through the runner's core, ``apps.endpoints.runner.Asker``, one
  coroutine per ask in the caller's loop, as a judge run sends them (a slot held per call);
- **runner**: the same asks through ``apps.endpoints.runner.Runner`` from a caller's thread,
  as an adversarial search's generator sends them (its loop thread, answers handed back).

Rounds alternate the three, so a machine that slows down mid-run slows all of them. The table
shows each one's median calls/s and client CPU a call (``process_time``: every thread of this
process), and the ratios to the bare client. ``--server process`` (the default) runs the fake
server in a child process, as a real endpoint would be; ``thread`` runs it in this process.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from apps.endpoints.client import (
    EndpointConfig,
    SamplingParams,
    close_clients,
    complete,
)
from apps.endpoints.runner import Ask, Asker, Runner
from tests.fakes.openai_server import FakeOpenAIServer, spawn_fake_server

# The model servers these runs call are local: allow loopback (apps/endpoints/egress.py).
os.environ.setdefault("DISCERN_EGRESS_ALLOW", "loopback")

PROMPT = (
    "Evaluation Criterion:\nFluency: is the summary well written?\n\nSource Content:\n{source}\n\n"
    "Target Text:\n{target}\n\nAnswer with 'Analysis:' then 'Rating:' on the next line."
)
PARAMS = SamplingParams(max_tokens=64, temperature=0.0)


@contextlib.contextmanager
def serve(kind: str, latency: float) -> Iterator[tuple[str, str]]:
    if kind == "thread":
        with FakeOpenAIServer(latency=latency, record_bodies=False) as server:
            yield server.base_url, "in-process thread"
    else:
        with spawn_fake_server(latency=latency) as spawned:
            yield spawned.base_url, "child process"


def prompts(calls: int, round_: int) -> list[str]:
    return [PROMPT.format(source=f"item {round_}.{i}", target=f"text {i}") for i in range(calls)]


class Clock:
    """Wall and CPU time (every thread of this process) from ``start()`` to ``stop()``."""

    def start(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def stop(self) -> None:
        self.wall, self.cpu = time.perf_counter() - self.wall, time.process_time() - self.cpu


def bare(base_url: str, texts: list[str], concurrency: int, clock: Clock) -> int:
    """aiohttp alone; returns the calls that failed."""
    import aiohttp

    async def work() -> int:
        gate = asyncio.Semaphore(concurrency)
        connector = aiohttp.TCPConnector(limit=concurrency)
        async with aiohttp.ClientSession(connector=connector) as session:

            async def one(text: str) -> bool:
                body = {
                    "model": "fake-judge",
                    "messages": [{"role": "user", "content": text}],
                    "max_tokens": 64,
                    "temperature": 0.0,
                }
                async with gate, session.post(f"{base_url}/chat/completions", json=body) as r:
                    data = await r.json()
                    return r.status == 200 and bool(data["choices"][0]["message"]["content"])

            # warm-up: the connection pool opened, as the others have theirs
            await asyncio.gather(*(one("warm-up") for _ in range(concurrency)))
            clock.start()
            replies = await asyncio.gather(*map(one, texts))
            clock.stop()
            return sum(not ok for ok in replies)

    return asyncio.run(work())


def through_complete(endpoint: EndpointConfig, texts: list[str], clock: Clock) -> int:
    async def work() -> int:
        warm = [complete(endpoint, "warm-up", PARAMS) for _ in range(endpoint.max_concurrency)]
        await asyncio.gather(*warm)
        clock.start()
        outcomes = await asyncio.gather(*(complete(endpoint, text, PARAMS) for text in texts))
        clock.stop()
        await close_clients()
        return sum(not o.ok for o in outcomes)

    return asyncio.run(work())


def through_asker(endpoint: EndpointConfig, texts: list[str], clock: Clock) -> int:
    async def work() -> int:
        asker = Asker(endpoint)
        warm = [{"role": "user", "content": "warm-up"}]
        await asyncio.gather(*(asker.ask(Ask(i, warm, PARAMS)) for i in range(32)))
        asks = [Ask(i, [{"role": "user", "content": t}], PARAMS) for i, t in enumerate(texts)]
        clock.start()
        answers = await asyncio.gather(*map(asker.ask, asks))
        clock.stop()
        await asker.close()
        return sum(not (answer.outcome and answer.outcome.ok) for answer in answers)

    return asyncio.run(work())


def through_runner(endpoint: EndpointConfig, texts: list[str], clock: Clock) -> int:
    with Runner(endpoint) as runner:
        warm = [{"role": "user", "content": "warm-up"}]
        list(runner.run(Ask(i, warm, PARAMS) for i in range(endpoint.max_concurrency)))
        asks = [Ask(i, [{"role": "user", "content": t}], PARAMS) for i, t in enumerate(texts)]
        clock.start()
        answers = list(runner.run(asks))
        clock.stop()
        return sum(not (answer.outcome and answer.outcome.ok) for answer in answers)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--server", choices=["process", "thread"], default="process")
    args = parser.parse_args()
    ideal = args.concurrency / args.latency
    results: dict[str, list[tuple[float, float]]] = {
        "bare": [],
        "complete": [],
        "asker": [],
        "runner": [],
    }
    with serve(args.server, args.latency) as (base_url, where):
        endpoint = EndpointConfig(
            base_url=base_url,
            model="fake-judge",
            timeout_s=10.0,
            max_concurrency=args.concurrency,
        )
        ways: dict[str, Callable[[list[str], Clock], int]] = {
            "bare": lambda texts, clock: bare(base_url, texts, args.concurrency, clock),
            "complete": lambda texts, clock: through_complete(endpoint, texts, clock),
            "asker": lambda texts, clock: through_asker(endpoint, texts, clock),
            "runner": lambda texts, clock: through_runner(endpoint, texts, clock),
        }
        print(
            f"server: fake OpenAI-compatible, {where}, latency {args.latency * 1000:.0f} ms; "
            f"{args.calls} calls at concurrency {args.concurrency} (ideal {ideal:.0f} calls/s); "
            "load average before: "
            f"{os.getloadavg()[0]:.2f}"
        )
        for round_ in range(args.rounds):
            line: list[str] = []
            for name, send in ways.items():
                texts = prompts(args.calls, round_ * 10 + len(line))
                clock = Clock()
                if failed := send(texts, clock):
                    raise SystemExit(f"{name}: {failed} calls failed")
                rate, cpu_ms = args.calls / clock.wall, clock.cpu / args.calls * 1000
                results[name].append((rate, cpu_ms))
                line.append(f"{name} {rate:.1f} calls/s, {cpu_ms:.2f} ms CPU")
            print(f"round {round_ + 1}: " + "; ".join(line))
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    floor_rate = statistics.median(rate for rate, _ in results["bare"])
    floor_cpu = statistics.median(cpu for _, cpu in results["bare"])
    print("| way | calls/s (median) | of ideal | of bare | CPU a call | over bare |")
    print("|---|---|---|---|---|---|")
    for name, measured in results.items():
        rate = statistics.median(r for r, _ in measured)
        cpu = statistics.median(c for _, c in measured)
        print(
            f"| {name} | {rate:.1f} | {rate / ideal:.1%} | {rate / floor_rate:.1%} | "
            f"{cpu:.2f} ms | {cpu / floor_cpu:.2f}x |"
        )


if __name__ == "__main__":
    main()
