"""Judge calls beside a peer: Discern's judge run against Inspect AI's eval, same endpoint.

Both call the same fake OpenAI-compatible endpoint (tests/fakes/openai_server.py, its own
process, `--latency` per reply) with the same `--calls` distinct judge prompts at the same
concurrency (ideal rate: concurrency / latency). Discern: `bench/judge_throughput.py` (its
judge-run machinery in one worker process, PostgreSQL and Redis). Inspect
AI: one `eval()` of as many samples, `generate()` then a `pattern` scorer, `max_connections` =
concurrency, in its own virtual environment (bench/peers/.venvs/inspect-ai, installed on the
first run). Rounds alternate Discern and Inspect; the table shows medians and the ratio.

Both counted over the same span, the whole job: Discern's run from its creation through
planning to its last call (judge_throughput's "whole run"), Inspect's whole `eval()`; calls/s
and CPU a call over that span. The calls phase alone (first request to last, as the endpoint
sees Inspect's; Discern's without creating and planning) is printed under each round.

    .venv/bin/python bench/peers/judging.py [--rounds 3] [--calls 2000] [--concurrency 32]
        [--latency 0.1] [--postgres URL] [--redis URL]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

import venvs  # noqa: E402

# The model servers these runs call are local: allow loopback (apps/endpoints/egress.py).
os.environ.setdefault("DISCERN_EGRESS_ALLOW", "loopback")

INSPECT = ["inspect-ai==0.3.285", "openai"]


def discern(args: argparse.Namespace) -> dict[str, float]:
    command = [
        sys.executable, str(ROOT / "bench" / "judge_throughput.py"),
        "--calls", str(args.calls), "--concurrency", str(args.concurrency),
        "--latency", str(args.latency),
        "--postgres", args.postgres, "--redis", args.redis,
    ]  # fmt: skip
    out = subprocess.run(command, cwd=ROOT, check=True, capture_output=True, text=True).stdout
    rate = re.search(r"throughput: ([\d.]+) calls/s", out)
    cpu = re.search(r"worker CPU: ([\d.]+) ms per call", out)
    whole = re.search(r"whole run .*: [\d.]+ s = ([\d.]+) calls/s, ([\d.]+) ms CPU per call", out)
    if not rate or not cpu or not whole:
        raise SystemExit(f"unexpected output of judge_throughput.py:\n{out}")
    return {
        "rate": float(whole.group(1)),
        "cpu_ms": float(whole.group(2)),
        "calls_rate": float(rate.group(1)),
        "calls_cpu_ms": float(cpu.group(1)),
    }


def inspect(args: argparse.Namespace, venv: Path) -> dict[str, float]:
    from tests.fakes.openai_server import spawn_fake_server

    with spawn_fake_server(latency=args.latency) as server:
        command = [
            str(venv / "bin" / "python"), str(HERE / "inspect_eval.py"),
            "--base-url", server.base_url, "--samples", str(args.calls),
            "--concurrency", str(args.concurrency),
        ]  # fmt: skip
        env = {k: v for k, v in os.environ.items() if not k.startswith("VIRTUAL_ENV")}
        process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        # the calls phase (printed beside the whole eval()): from the first request the
        # endpoint sees to the last
        first = last = None
        while process.poll() is None:
            count = server.stats()["request_count"]
            now = time.perf_counter()
            if count and first is None:
                first = now
            if count >= args.calls and last is None:
                last = now
            time.sleep(0.05)
        stdout, stderr = process.communicate()
        done = subprocess.CompletedProcess(command, process.returncode, stdout, stderr)
        stats = server.stats()
    if done.returncode != 0:
        raise SystemExit(f"Inspect AI failed:\n{done.stdout}\n{done.stderr}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if result["completed"] != args.calls or stats["request_count"] != args.calls:
        raise SystemExit(f"Inspect AI did not do {args.calls} calls: {result}, server {stats}")
    return {
        "rate": args.calls / result["wall_s"],
        "cpu_ms": result["cpu_s"] / args.calls * 1000,
        "calls_rate": args.calls / (last - first) if first and last else float("nan"),
        "peak": stats["max_in_flight"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument(
        "--postgres", default="postgres://discern:discern@127.0.0.1:5432/discern_bench_peers_judge"
    )
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/12")
    args = parser.parse_args()
    venv = venvs.ensure("inspect-ai", INSPECT)
    ideal = args.concurrency / args.latency
    runs: dict[str, list[dict[str, float]]] = {"discern": [], "inspect": []}
    loads = [os.getloadavg()[0]]
    for round_ in range(1, args.rounds + 1):
        for name in ("discern", "inspect"):
            result = discern(args) if name == "discern" else inspect(args, venv)
            runs[name].append(result)
            loads.append(os.getloadavg()[0])
            print(
                f"round {round_} {name:<8} whole job {result['rate']:6.1f} calls/s "
                f"({result['rate'] / ideal:4.0%} of ideal), {result['cpu_ms']:5.2f} ms CPU a call;"
                f" calls phase {result['calls_rate']:.1f} calls/s"
                + (
                    f" ({result['calls_cpu_ms']:.2f} ms worker CPU a call)"
                    if "calls_cpu_ms" in result
                    else f", peak {result['peak']:.0f} in flight"
                ),
                flush=True,
            )

    def median(name: str, key: str) -> float:
        return statistics.median(r[key] for r in runs[name])

    def spread(name: str, key: str) -> str:
        values = [r[key] for r in runs[name]]
        return f"{min(values):.1f}-{max(values):.1f}"

    d_rate, i_rate = median("discern", "rate"), median("inspect", "rate")
    print()
    print(
        f"| work | Discern | Inspect AI {venvs.version(venv, 'inspect-ai')} | ratio |\n"
        "|---|---|---|---|\n"
        f"| judge calls, {args.calls:,} distinct prompts, endpoint at "
        f"{args.latency * 1000:.0f} ms, concurrency {args.concurrency} (ideal {ideal:.0f}/s) "
        f"| {d_rate:.0f} calls/s ({d_rate / ideal:.0%}; {spread('discern', 'rate')}), "
        f"{median('discern', 'cpu_ms'):.2f} ms CPU a call (whole run, planning included) "
        f"| {i_rate:.0f} calls/s ({i_rate / ideal:.0%}; {spread('inspect', 'rate')}), "
        f"{median('inspect', 'cpu_ms'):.1f} ms CPU a sample (whole eval()) "
        f"| {d_rate / i_rate:.1f}x calls/s, "
        f"{median('inspect', 'cpu_ms') / median('discern', 'cpu_ms'):.1f}x less CPU |"
    )
    d_calls, i_calls = median("discern", "calls_rate"), median("inspect", "calls_rate")
    print(
        f"calls phase only: Discern {d_calls:.0f} calls/s, Inspect AI {i_calls:.0f} calls/s "
        f"= {d_calls / i_calls:.1f}x"
    )
    print(
        f"\nmedians of {args.rounds} alternating rounds; load average "
        f"{min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} cores"
    )
    if d_rate >= 0.85 * ideal:  # Discern near the endpoint's ceiling: the ratio measures the peer
        print(
            f"the ratio of calls/s cannot pass ideal / peer = {ideal / i_rate:.1f}x at this "
            "setting (no client passes the endpoint's ideal); give more room "
            "(--concurrency 256 --latency 0.5 --calls 20000) or compare CPU a call"
        )


if __name__ == "__main__":
    main()
