"""Adversarial search: how long a whole search takes against a local fake endpoint, beside
the time its calls need at the endpoint's latency and concurrency, and the same search again
(every call from the cache).

    .venv/bin/python bench/adversarial_search.py [--items 20] [--iterations 5]
        [--candidates 4] [--latency 0.05] [--concurrency 16]
        [--postgres URL] [--redis URL | --no-redis]

A child process with a fresh PostgreSQL database makes ``items`` source items, a generator,
a gold judge (the shipped ``adveval-gold-0-100``: 8 samples) and an LLM victim on a fake
OpenAI-compatible server (in the child, answering each request after ``latency`` seconds;
the generator is scripted to improve along its trajectory, tests/judging/scripted_search.py),
then works one R+ search with ``adversarial_search_work``, the function the worker task runs.
The target is out of reach, so every item runs all its iterations.

The calls of one pass go phase by phase (the generator for every item at once, then each
gold judge's run, then the victim's), each phase at the judge's concurrency, so the time the
calls need is the sum over phases of ceil(calls / concurrency) x latency.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

# The model servers these runs call are local: allow loopback (apps/endpoints/egress.py).
os.environ.setdefault("DISCERN_EGRESS_ALLOW", "loopback")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _setup(args: argparse.Namespace, base_url: str):
    from django.core.management import call_command

    from apps.catalog.loading import catalog_load
    from apps.catalog.models import Criterion
    from apps.corpus.models import Dataset, SourceItem
    from apps.judging.loading import judging_load
    from apps.judging.models import Judge, Strategy
    from apps.judging.services import JudgeChoice, SearchSetup
    from tests.factories import llm_judge_save

    call_command("migrate", verbosity=0)
    catalog_load()
    judging_load()
    dataset = Dataset.objects.create(name="bench")
    SourceItem.objects.bulk_create(
        SourceItem(
            dataset=dataset,
            external_id=f"b{i}",
            source=f"Question {i}: what is the answer?",
            original=f"Answer at level 0 (item {i}).",
        )
        for i in range(args.items)
    )

    def judge(name: str, model: str, **extra) -> Judge:
        fields = {"base_url": base_url, "model": model, "max_concurrency": args.concurrency}
        return llm_judge_save(name=name, timeout_s=30, **fields, **extra)

    def strategy(slug: str) -> Strategy:
        return Strategy.objects.filter(slug=slug).latest("version")

    return SearchSetup(
        dataset=dataset,
        generator=judge("generator", "generator-model").endpoint,
        victim=JudgeChoice(judge("victim", "victim-model"), strategy("adveval-0-100")),
        gold=[
            JudgeChoice(
                judge("gold", "gold-model", default_params={"seed": 1}),
                strategy("adveval-gold-0-100"),
            )
        ],
        direction="R+",
        criterion=Criterion.objects.get(key="discern-overall-default"),
        target_score=1000,
        max_iterations=args.iterations,
        candidates_per_iteration=args.candidates,
        rule_baseline=False,
    )


def _search(setup) -> dict:
    from apps.judging.models import AdversarialSearch, JudgeCall, JudgeRun, SearchIteration
    from apps.judging.services import adversarial_search_create, adversarial_search_work

    search = adversarial_search_create(user=None, setup=setup, start=False)  # no task queued
    AdversarialSearch.objects.filter(pk=search.pk).update(status="running")
    JudgeRun.objects.filter(search_judge__search=search).update(status="running")
    started = time.perf_counter()
    adversarial_search_work(search_id=search.pk)
    seconds = time.perf_counter() - started
    search.refresh_from_db()
    runs = [j.run_id for j in search.judges.all()]
    return {
        "status": search.status,
        "seconds": seconds,
        "generator_calls": search.generator_calls,
        "generator_cached": search.generator_cached,
        "judge_calls": JudgeCall.objects.filter(run_id__in=runs).count(),
        "judge_cached": JudgeCall.objects.filter(run_id__in=runs, cached=True).count(),
        "iterations": SearchIteration.objects.filter(search_item__search=search).count(),
    }


def _ideal(args: argparse.Namespace) -> float:
    """Seconds the calls need at the latency and concurrency, phase by phase."""
    rounds = lambda calls: math.ceil(calls / args.concurrency)  # noqa: E731
    first = rounds(args.items * 8) + rounds(args.items)  # R0: gold samples, victim
    each = (
        rounds(args.items)
        + rounds(args.items * args.candidates * 8)
        + rounds(args.items * args.candidates)
    )
    return (first + args.iterations * each) * args.latency


def child(args: argparse.Namespace) -> None:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    from tests.fakes.openai_server import FakeOpenAIServer
    from tests.judging.scripted_search import scripted_reply

    with FakeOpenAIServer(reply=scripted_reply, latency=args.latency) as server:
        setup = _setup(args, server.base_url)
        first = _search(setup)
        first["server_requests"], first["max_in_flight"] = (
            server.request_count,
            server.max_in_flight,
        )
        second = _search(setup)
        second["server_requests"] = server.request_count - first["server_requests"]
    print(json.dumps({"first": first, "second": second, "ideal_s": _ideal(args)}))


def recreate_postgres(url: str) -> None:
    import psycopg

    base, name = url.rsplit("/", 1)
    with psycopg.connect(f"{base}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=20)
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--candidates", type=int, default=4)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument(
        "--postgres", default="postgres://discern:discern@127.0.0.1:5432/discern_bench_search"
    )
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/12")
    parser.add_argument("--no-redis", action="store_true")
    parser.add_argument("--child", action="store_true")
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    recreate_postgres(args.postgres)
    env = {
        **os.environ,
        "DATABASE_URL": args.postgres,
        "REDIS_URL": "" if args.no_redis else args.redis,
        "DJANGO_DEBUG": "true",
        "DJANGO_LOG_LEVEL": "WARNING",
        "DISCERN_VAR_DIR": str(ROOT / "var" / "bench"),
    }
    command = [sys.executable, __file__, "--child", *sys.argv[1:]]
    out = subprocess.run(command, env=env, cwd=ROOT, check=True, capture_output=True, text=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    first, second, ideal = result["first"], result["second"], result["ideal_s"]
    calls = first["generator_calls"] + first["judge_calls"]
    print(
        f"{args.items} items x {args.iterations} iterations of {args.candidates} candidates; "
        f"gold 8 samples; latency {args.latency * 1000:.0f} ms; concurrency {args.concurrency}; "
        f"limits {'in-process' if args.no_redis else 'shared through Redis'}"
    )
    print(
        f"search 1: {first['status']}, {calls} calls ({first['generator_calls']} generator, "
        f"{first['judge_calls']} judge), {first['server_requests']} HTTP requests, "
        f"peak in flight {first['max_in_flight']}"
    )
    print(
        f"  {first['seconds']:.2f} s; the calls need {ideal:.2f} s at this latency and "
        f"concurrency: {ideal / first['seconds']:.0%} of the time is spent waiting for replies"
    )
    print(
        f"search 2 (the same again): {second['generator_cached']} generator and "
        f"{second['judge_cached']} judge calls from the cache, {second['server_requests']} "
        f"HTTP requests, {second['seconds']:.2f} s"
    )


if __name__ == "__main__":
    main()
