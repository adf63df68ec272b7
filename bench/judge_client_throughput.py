"""Throughput of the judge LLM client: N calls through ``complete`` at a fixed concurrency.

    .venv/bin/python bench/judge_client_throughput.py [--calls 2000] [--concurrency 32]
        [--latency 0.1] [--server process|thread] [--transport aiohttp|httpx|both]

The fake OpenAI-compatible server answers every request after ``latency`` seconds, so the ideal
rate is concurrency / latency (32 / 0.1 s = 320 calls/s). ``--server process`` (the default)
runs the server in a child process, as a real endpoint would be; ``thread`` runs it inside this
process, where it competes with the client for the GIL. ``--transport both`` (the default)
measures the openai client with each HTTP transport in turn: aiohttp (ours by default) and the
SDK's own httpx.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from apps.endpoints.client import (
    TRANSPORTS,
    CallOutcome,
    EndpointConfig,
    SamplingParams,
    close_clients,
    complete,
    configure_transport,
)
from tests.fakes.openai_server import FakeOpenAIServer, spawn_fake_server

# The model servers these runs call are local: allow loopback (apps/endpoints/egress.py).
os.environ.setdefault("DISCERN_EGRESS_ALLOW", "loopback")

PROMPT = (
    "Evaluation Criterion:\nFluency: is the summary well written?\n\nSource Content:\n{source}\n\n"
    "Target Text:\n{target}\n\nAnswer with 'Analysis:' then 'Rating:' on the next line."
)


@contextlib.contextmanager
def serve(kind: str, latency: float) -> Iterator[tuple[str, str]]:
    if kind == "thread":
        with FakeOpenAIServer(latency=latency, record_bodies=False) as server:
            yield server.base_url, "in-process thread"
    else:
        with spawn_fake_server(latency=latency) as spawned:
            yield spawned.base_url, "child process"


async def run(base_url: str, calls: int, concurrency: int) -> tuple[float, list[CallOutcome]]:
    endpoint = EndpointConfig(
        base_url=base_url, model="fake-judge", timeout_s=10.0, max_concurrency=concurrency
    )
    params = SamplingParams(max_tokens=64, temperature=0.0)
    # Warm up: open the connection pool so the timed part measures steady state.
    await asyncio.gather(*(complete(endpoint, "warm-up", params) for _ in range(concurrency)))
    started = time.perf_counter()
    outcomes = await asyncio.gather(
        *(
            complete(endpoint, PROMPT.format(source=f"item {i}", target=f"text {i}"), params)
            for i in range(calls)
        )
    )
    elapsed = time.perf_counter() - started
    await close_clients()
    return elapsed, list(outcomes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--server", choices=["process", "thread"], default="process")
    parser.add_argument("--transport", choices=[*TRANSPORTS, "both"], default="both")
    args = parser.parse_args()

    transports = list(TRANSPORTS) if args.transport == "both" else [args.transport]
    for transport in transports:
        measure(args, transport)


def measure(args: argparse.Namespace, transport: str) -> None:
    configure_transport(transport)
    with serve(args.server, args.latency) as (base_url, where):
        cpu_started = time.process_time()
        elapsed, outcomes = asyncio.run(run(base_url, args.calls, args.concurrency))
        cpu = time.process_time() - cpu_started

    failed = [o for o in outcomes if not o.ok]
    latencies = sorted(o.latency_s or 0.0 for o in outcomes)
    ideal = args.concurrency / args.latency
    rate = args.calls / elapsed
    print(f"== HTTP transport {transport}")
    print(f"server: fake OpenAI-compatible, {where}, latency {args.latency * 1000:.0f} ms")
    print(f"calls: {args.calls} at concurrency {args.concurrency}; failed: {len(failed)}")
    print(f"elapsed: {elapsed:.2f} s (ideal {args.calls / ideal:.2f} s)")
    print(f"throughput: {rate:.1f} calls/s vs ideal {ideal:.0f} calls/s = {rate / ideal:.1%}")
    print(
        f"latency per call: median {statistics.median(latencies) * 1000:.1f} ms, "
        f"p95 {latencies[int(0.95 * (len(latencies) - 1))] * 1000:.1f} ms"
    )
    print(f"client CPU: {cpu / args.calls * 1000:.2f} ms per call")


if __name__ == "__main__":
    main()
