"""Start-up cost: management commands, and a fresh web worker's first request.

`manage.py help` and `manage.py check` are timed (wall and CPU, median of `--rounds`); then a
PostgreSQL database gets the schema and one researcher, and for each round a new server is
started as docs/deployment.md (gunicorn, one worker) and scripts/demo.sh (runserver) start it;
once it is ready to serve, the first request (the researcher's home page, logged in) and the
second are timed.

    .venv/bin/python bench/cold_start.py [--rounds 5] [--port 8950]
        [--database postgres://discern:discern@127.0.0.1:5432/discern_bench_cold]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DB = "postgres://discern:discern@127.0.0.1:5432/discern_bench_cold?conn_max_age=60"
# gunicorn binds its socket before a worker has loaded the app: the hook says when it has.
HOOK = """
def post_worker_init(worker):
    open({ready!r}, "w").write("ready")
"""


def timed(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, cwd=ROOT, env=env, check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return time.perf_counter() - started, cpu


def session_cookie(env: dict[str, str], database: str) -> str:
    """A fresh database with the schema and one researcher; that researcher's session key."""
    import psycopg

    base, name = database.split("?")[0].rsplit("/", 1)
    with psycopg.connect(f"{base}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    script = (
        "from django.contrib.auth import get_user_model;"
        "from django.test import Client;"
        "u = get_user_model().objects.create_user('cold', password='cold-password-1',"
        " role='researcher');"
        "c = Client(); c.force_login(u); print(c.cookies['sessionid'].value)"
    )
    done = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", script],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip().splitlines()[-1]


def first_requests(command: list[str], env, port: int, cookie: str, ready: Path | None):
    """Start the server, wait until it can serve, time its first and second request."""
    import httpx

    server = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if ready is not None:
                if ready.exists():
                    break
            else:
                try:
                    import socket

                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    pass
            time.sleep(0.05)
        else:
            raise SystemExit(f"{command[2]} did not start")
        started = time.perf_counter()
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", cookies={"sessionid": cookie}) as c:
            times = []
            for _ in range(2):
                started = time.perf_counter()
                response = c.get("/", timeout=30)
                times.append((time.perf_counter() - started) * 1000)
                assert response.status_code == 200, response.status_code
        return times
    finally:
        server.terminate()
        server.wait(timeout=30)
        if ready is not None:
            ready.unlink(missing_ok=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--port", type=int, default=8950)
    parser.add_argument("--database", default=DEFAULT_DB)
    args = parser.parse_args()
    python = sys.executable
    env = {
        **os.environ,
        "DJANGO_DEBUG": "false",
        "DJANGO_SECRET_KEY": "bench-only-secret",
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
        "DJANGO_LOG_LEVEL": "WARNING",
        "DATABASE_URL": args.database,
    }
    for name in ("help", "check"):
        runs = [timed([python, "manage.py", name], env) for _ in range(args.rounds)]
        print(
            f"manage.py {name:<6} wall {statistics.median(w for w, _ in runs):.2f} s, "
            f"CPU {statistics.median(c for _, c in runs):.2f} s (median of {len(runs)})"
        )
    cookie = session_cookie(env, args.database)
    with tempfile.TemporaryDirectory() as tmp:
        ready = Path(tmp) / "ready"
        config = Path(tmp) / "gunicorn_hook.py"
        config.write_text(HOOK.format(ready=str(ready)))
        gunicorn = [python, "-m", "gunicorn", "config.wsgi", "-w", "1", "-c", str(config)]
        gunicorn += ["-b", f"127.0.0.1:{args.port}", "--log-level", "warning"]
        runserver = [python, "manage.py", "runserver", f"127.0.0.1:{args.port}", "--noreload"]
        for name, command, hook in (("gunicorn", gunicorn, ready), ("runserver", runserver, None)):
            runs = [
                first_requests(command, env, args.port, cookie, hook) for _ in range(args.rounds)
            ]
            print(
                f"{name:<9} first request {statistics.median(r[0] for r in runs):.0f} ms, "
                f"second {statistics.median(r[1] for r in runs):.0f} ms "
                f"(median of {len(runs)}; each {', '.join(f'{r[0]:.0f}' for r in runs)})"
            )
    print(f"load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
