"""Judge run throughput: N calls through the run machinery against a local fake endpoint.

    .venv/bin/python bench/judge_throughput.py [--case small|big] [--calls 2000]
        [--concurrency 32] [--latency 0.1] [--postgres URL] [--redis URL | --no-redis]
        [--workers N]

Two cases (docs/benchmarks.md, "Judge throughput"), each with its targets printed as met or
not: ``--case small`` (the default: 2,000 calls, concurrency 32, 100 ms, one process; at least
95% of ideal) and ``--case big`` (20,000 calls, concurrency 256, 500 ms, a Celery worker with
two processes; at least 85% of ideal). Both: at most 1 ms of worker CPU per call, and the cached
rerun sends no request. Options given explicitly override the case's.

The fake OpenAI-compatible server (its own process) answers each request after ``latency``
seconds, so the ideal rate is concurrency / latency (32 / 0.1 s = 320 calls/s). A child
process with a fresh PostgreSQL database creates N source items, one LLM judge and a score-only
strategy, then works one judge run of N calls with ``judge_run_work``, the same function a
Celery task runs (claims, prompts, cache lookups, model calls through the runner under the
judge's limits, parsing and batched saves). Then it runs the same work again as a new run: every
call must come from the cache, with no HTTP request.

After the runs, a bare aiohttp client (no database, no limiter, no SDK) sends the same number
of requests to the same endpoint at the same concurrency: its rate is the ceiling the fake
endpoint and loopback HTTP leave under the ideal on this machine, printed beside the run's.

The child process is set up as a worker process is (``workers.celery.tune_process``).

``--workers N`` instead starts a real ``celery worker --concurrency N`` (Redis broker) and
starts the runs as the page does (``judge_run_start``): the run is planned by one task and
fanned out over tasks that share the judge's slots through Redis. The run is planned here
first (timed apart), and the calls phase is timed from the run's ``started_at`` to its last
stored call. Worker CPU per call is the CPU time of the process(es) working the calls
(``process_time`` in one process; the Celery worker's processes from /proc otherwise) over
the calls phase, divided by the calls. The whole run (creating the run, planning it and the
calls, as a peer's whole eval is counted) is printed too: its wall time and its CPU (this
process's for creating and planning, plus the workers' for the calls), per call.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import subprocess
import sys
import time
from pathlib import Path

# The model servers these runs call are local: allow loopback (apps/endpoints/egress.py).
os.environ.setdefault("DISCERN_EGRESS_ALLOW", "loopback")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _setup(calls: int, base_url: str, concurrency: int):
    from django.core.management import call_command

    from apps.catalog.loading import catalog_load
    from apps.catalog.models import Criterion
    from apps.corpus.models import Dataset, SourceItem
    from apps.judging.models import Judge, JudgeRun
    from apps.judging.services import judge_run_create, judge_save, strategy_create

    call_command("migrate", verbosity=0)
    catalog_load()
    dataset = Dataset.objects.create(name="bench")
    SourceItem.objects.bulk_create(
        SourceItem(
            dataset=dataset,
            external_id=f"b{i}",
            source=f"Source document number {i}: the council met and decided things.",
            original=f"Summary {i}: the council decided on item {i}.",
        )
        for i in range(calls)
    )
    judge = judge_save(
        judge=Judge(name="bench"),
        endpoint={
            "base_url": base_url,
            "model": "bench-model",
            "timeout_s": 30,
            "max_concurrency": concurrency,
        },
    )
    strategy = strategy_create(
        slug="bench-score",
        name="bench score",
        family="single",
        parser="analysis_rating",
        prompt_template="Rate the text on {{quality}}.\n{{source}}\n{{text}}\nRating?",
        max_tokens=32,
    )
    criterion = Criterion.objects.get(key="discern-fluency-default")

    def new_run() -> JudgeRun:
        run = judge_run_create(
            user=None,
            judge=judge,
            strategy=strategy,
            dataset=dataset,
            criteria=[criterion],
            start=False,
        )
        JudgeRun.objects.filter(pk=run.pk).update(status="running")
        return run

    return new_run


def _timed_run(new_run, concurrency: int) -> dict:
    from apps.judging.services import judge_run_plan, judge_run_work

    whole, whole_cpu = time.perf_counter(), time.process_time()
    run = new_run()
    started = time.perf_counter()
    judge_run_plan(run_id=run.pk)
    planned = time.perf_counter()
    cpu = time.process_time()
    judge_run_work(run_id=run.pk, share=concurrency)
    ended_cpu = time.process_time()
    finished = time.perf_counter()
    run.refresh_from_db()
    return {
        "status": run.status,
        "total": run.total,
        "done": run.done,
        "failed": run.failed,
        "cached": run.cached,
        "http_requests": run.http_requests,
        "plan_s": planned - started,
        "work_s": finished - planned,
        "cpu_s": ended_cpu - cpu,
        "whole_s": finished - whole,
        "whole_cpu_s": ended_cpu - whole_cpu,
    }


def _process_tree_cpu(pid: int) -> float:
    """CPU seconds (user + system) of a process and its children, from /proc."""
    ticks = os.sysconf("SC_CLK_TCK")
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parents[int(entry.name)] = int(fields[1])
    tree, grew = {pid}, True
    while grew:
        more = {p for p, parent in parents.items() if parent in tree} - tree
        grew, tree = bool(more), tree | more
    total = 0.0
    for member in tree:
        try:
            fields = Path(f"/proc/{member}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / ticks
    return total


def _worker_run(new_run, worker_pid: int) -> dict:
    """Plan here, start the run as the page does and wait for the workers to finish it."""
    from django.db.models import Max
    from django.utils import timezone

    from apps.judging.models import JudgeRun
    from apps.judging.services import judge_run_plan, judge_run_start

    whole, whole_cpu = timezone.now(), time.process_time()
    run = new_run()
    started = time.perf_counter()
    judge_run_plan(run_id=run.pk)
    planned = time.perf_counter()
    run.refresh_from_db()
    here_cpu = time.process_time() - whole_cpu  # creating and planning, in this process
    cpu = _process_tree_cpu(worker_pid)
    judge_run_start(run=run)
    while not JudgeRun.objects.get(pk=run.pk).finished:
        time.sleep(0.05)
    cpu = _process_tree_cpu(worker_pid) - cpu
    run.refresh_from_db()
    last = run.calls.aggregate(last=Max("finished_at"))["last"]
    return {
        "status": run.status,
        "total": run.total,
        "done": run.done,
        "failed": run.failed,
        "cached": run.cached,
        "http_requests": run.http_requests,
        "plan_s": planned - started,
        "work_s": (last - run.started_at).total_seconds(),
        "cpu_s": cpu,
        "whole_s": (last - whole).total_seconds(),
        "whole_cpu_s": here_cpu + cpu,
    }


def _start_worker(workers: int) -> subprocess.Popen:
    from workers.celery import app

    log = (Path(os.environ["DISCERN_VAR_DIR"]) / "bench-worker.log").open("w")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "workers",
            "worker",
            "-Q",
            os.environ["DISCERN_QUEUE"],
            f"--concurrency={workers}",
            "--loglevel=WARNING",
            "--without-gossip",
            "--without-mingle",
        ],
        cwd=ROOT,
        env=os.environ.copy(),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    while not app.control.ping(timeout=0.5):
        if process.poll() is not None:
            raise RuntimeError("the worker did not start")
    return process


def child(args: argparse.Namespace) -> None:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    from tests.fakes.openai_server import SpawnedFakeServer
    from workers.celery import tune_process

    new_run = _setup(args.calls, args.base_url, args.concurrency)
    tune_process()  # as a worker process does when it starts
    stats = SpawnedFakeServer(args.base_url, None).stats  # type: ignore[arg-type]
    worker = _start_worker(args.workers) if args.workers else None
    try:
        _measure(args, new_run, stats, worker.pid if worker is not None else 0)
    finally:
        if worker is not None:
            worker.terminate()
            worker.wait(30)


def _measure(args: argparse.Namespace, new_run, stats, worker_pid: int) -> None:
    def timed(make):
        if worker_pid:
            return _worker_run(make, worker_pid)
        return _timed_run(make, args.concurrency)

    before = stats()["request_count"]
    first = timed(new_run)
    first["server_requests"] = stats()["request_count"] - before
    first["max_in_flight"] = stats()["max_in_flight"]
    before = stats()["request_count"]
    second = timed(new_run)
    second["server_requests"] = stats()["request_count"] - before
    print(json.dumps({"first": first, "second": second}))


def bare_client_rate(base_url: str, calls: int, concurrency: int) -> float:
    """Calls/s of a bare aiohttp client against the same endpoint: the same number of chat
    completions, ``concurrency`` at a time, each reply's JSON read, and nothing else (no
    database, no limiter, no SDK). What any client reaches on this machine, so the ceiling
    under the ideal that the fake endpoint and loopback HTTP leave."""
    import asyncio

    import aiohttp

    body = {
        "model": "bench-model",
        "messages": [{"role": "user", "content": "Rate the text on fluency.\nSource.\nText."}],
        "max_tokens": 32,
    }

    async def work() -> float:
        gate = asyncio.Semaphore(concurrency)
        connector = aiohttp.TCPConnector(limit=concurrency)
        async with aiohttp.ClientSession(connector=connector) as session:

            async def one() -> None:
                async with gate, session.post(f"{base_url}/chat/completions", json=body) as r:
                    await r.json()

            started = time.perf_counter()
            await asyncio.gather(*(one() for _ in range(calls)))
            return calls / (time.perf_counter() - started)

    return asyncio.run(work())


def recreate_postgres(url: str) -> None:
    import psycopg

    base, name = url.rsplit("/", 1)
    with psycopg.connect(f"{base}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')


CASES = {
    # name: calls, concurrency, latency (s), worker processes (0: one process), target of ideal
    "small": (2000, 32, 0.1, 0, 0.95),
    "big": (20000, 256, 0.5, 2, 0.85),
}
CPU_TARGET_MS = 1.0  # worker CPU per call


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", choices=sorted(CASES), default="small")
    parser.add_argument("--calls", type=int)
    parser.add_argument("--concurrency", type=int)
    parser.add_argument("--latency", type=float)
    parser.add_argument(
        "--postgres", default="postgres://discern:discern@127.0.0.1:5432/discern_bench_judge"
    )
    parser.add_argument(
        "--redis",
        default="redis://127.0.0.1:6379/12",
        help="shared limits across workers, as in production",
    )
    parser.add_argument("--no-redis", action="store_true", help="in-process limits only")
    parser.add_argument(
        "--workers",
        type=int,
        help="run through a real Celery worker with this many processes (0: in this process)",
    )
    parser.add_argument("--child", action="store_true")
    parser.add_argument("--base-url", default="")
    args = parser.parse_args()
    calls, concurrency, latency, workers, args.target = CASES[args.case]
    args.calls = calls if args.calls is None else args.calls
    args.concurrency = concurrency if args.concurrency is None else args.concurrency
    args.latency = latency if args.latency is None else args.latency
    args.workers = workers if args.workers is None else args.workers
    if args.child:
        child(args)
        return

    if args.workers and args.no_redis:
        parser.error("--workers needs Redis (the broker and the shared limits)")
    measure(args)


def measure(args: argparse.Namespace) -> float:
    """One measurement (first run and cached rerun); calls/s."""
    from tests.fakes.openai_server import spawn_fake_server

    recreate_postgres(args.postgres)
    env = {
        **os.environ,
        "DATABASE_URL": args.postgres,
        "REDIS_URL": "" if args.no_redis else args.redis,
        # as a deployed worker runs: DEBUG off (with it, Django keeps every query's SQL)
        "DJANGO_DEBUG": "false",
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(32),
        "DJANGO_LOG_LEVEL": "WARNING",
        "DISCERN_VAR_DIR": str(ROOT / "var" / "bench"),
        "DISCERN_QUEUE": f"bench-judge-{os.getpid()}",
    }
    with spawn_fake_server(latency=args.latency) as server:
        command = [
            sys.executable,
            __file__,
            "--child",
            "--base-url",
            server.base_url,
            "--calls",
            str(args.calls),
            "--concurrency",
            str(args.concurrency),
            "--latency",
            str(args.latency),
            "--workers",
            str(args.workers),
        ]
        server_cpu = _process_tree_cpu(server.process.pid)
        out = subprocess.run(
            command, env=env, cwd=ROOT, check=True, stdout=subprocess.PIPE, text=True
        ).stdout
        server_cpu = _process_tree_cpu(server.process.pid) - server_cpu
        bare = bare_client_rate(server.base_url, args.calls, args.concurrency)
    result = json.loads(out.strip().splitlines()[-1])
    first, second = result["first"], result["second"]
    ideal = args.concurrency / args.latency
    rate = first["done"] / first["work_s"]
    cpu_ms = first["cpu_s"] / max(first["done"], 1) * 1000
    limits = "in-process only" if args.no_redis else "shared through Redis"
    how = (
        f"celery worker --concurrency {args.workers}"
        if args.workers
        else "judge_run_work in one process"
    )
    print(
        f"== case {args.case}: {args.calls} calls. Fake endpoint: "
        f"child process, latency {args.latency * 1000:.0f} ms; judge concurrency "
        f"{args.concurrency}; limits {limits}; database PostgreSQL"
    )
    print(f"through: {how}")
    print(
        f"run 1: {first['done']} done, {first['failed']} failed, "
        f"{first['server_requests']} HTTP requests, peak in flight {first['max_in_flight']}"
    )
    print(
        f"  planning {first['plan_s']:.2f} s; calls {first['work_s']:.2f} s "
        f"(ideal {first['done'] / ideal:.2f} s)"
    )
    print(f"  throughput: {rate:.1f} calls/s vs ideal {ideal:.0f} calls/s = {rate / ideal:.1%}")
    print(
        f"  bare client (aiohttp alone, same endpoint and concurrency): {bare:.1f} calls/s = "
        f"{bare / ideal:.1%} of ideal; the run reached {rate / bare:.1%} of it"
    )
    print(f"  worker CPU: {cpu_ms:.2f} ms per call (calls phase)")
    print(
        f"  whole run (created, planned, calls): {first['whole_s']:.2f} s = "
        f"{first['done'] / first['whole_s']:.1f} calls/s, "
        f"{first['whole_cpu_s'] / max(first['done'], 1) * 1000:.2f} ms CPU per call"
    )
    calls = first["done"] + second["done"]
    print(f"  fake server CPU: {server_cpu / max(calls, 1) * 1000:.2f} ms per call (both runs)")
    print(
        f"run 2 (same work, new run): {second['done']} done, {second['cached']} from the cache, "
        f"{second['server_requests']} HTTP requests, {second['work_s']:.2f} s"
    )
    checks = [
        (f">= {args.target:.0%} of ideal", rate / ideal >= args.target),
        (f"<= {CPU_TARGET_MS:g} ms worker CPU per call", cpu_ms <= CPU_TARGET_MS),
        ("cached rerun: 0 HTTP requests", second["server_requests"] == 0),
        ("every call done", first["done"] == args.calls == second["done"]),
    ]
    for name, met in checks:
        print(f"  target {name}: {'met' if met else 'NOT met'}")
    return rate


if __name__ == "__main__":
    main()
