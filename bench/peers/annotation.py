"""Annotation beside a peer: Discern's vetting API against Label Studio's, same data, same client.

Both serve the same perturbations (bench/annotate_load.py's generated items, one negated
perturbation each, 3 judgements wanted per perturbation) on loopback with PostgreSQL, each on
its production server with `--workers` processes. Discern: gunicorn, connections kept
(`conn_max_age=60`), measured by bench/annotate_load.py itself (REST API: POST vetting/next/,
POST vettings/). Label Studio (bench/peers/.venvs/label-studio, installed on the first run):
uwsgi with the settings of its image's deploy/uwsgi.ini (`UWSGI`; `--ls-server gunicorn` for
gunicorn), once with its settings as shipped (a new connection a request) and once with
connections kept (`--ls-conn-max-age 0,60`). It gets the same texts as tasks of one project
(`maximum_annotations` 3, sequential sampling), loaded through its import API, and the same
client threads (annotate_load's `annotate`): GET /api/projects/<id>/next/, then POST
/api/tasks/<id>/annotations/ with a choice (the verdict). One client, then 20 clients, without
pause, for `--seconds`; rounds alternate Discern and Label Studio's variants; the table shows
medians, each side's app and PostgreSQL CPU an item apart, the connections each opened a
request, and the ratios.

    .venv/bin/python bench/peers/annotation.py [--perturbations 2492] [--rounds 3]
        [--seconds 20] [--workers 4] [--port 8560] [--ls-server uwsgi|gunicorn]
        [--ls-conn-max-age 0,60] [--database-prefix discern_bench_peers]
    .venv/bin/python bench/peers/annotation.py --perturbations 50000 --rounds 2

The same conditions for both, as a Label Studio maintainer would ask:

* fresh work every round: each side's database is made once (a template) and every measured
  round runs on a fresh copy of it (`CREATE DATABASE ... TEMPLATE`), so no side meets the
  judgements of earlier rounds, and each round can hand out all N x 3 judgements;
* the same upkeep: before each round both copies get `VACUUM ANALYZE` and a `CHECKPOINT`
  (annotate_load's `vacuum`), then the server starts;
* nobody runs out: a client told there is no work left stops early, which would shorten the
  load; each round prints how many did and the judgements used of the N x 3, a round where
  any did is marked INVALID, left out of the medians, and the script exits with status 1
  (raise `--perturbations` or lower `--seconds`);
* CPU over the same span, counted the same way: the server's processes' CPU time (gunicorn's
  workers; uwsgi's workers and its HTTP router), "app", and the database's PostgreSQL
  backends' (from /proc; annotate_load's `BackendCpu`, which also counts the backends Label
  Studio opens and closes for each request), "PostgreSQL", from the clients' start to their
  end, over the items answered (first submits), for both, shown apart;
* its connections: Label Studio's settings set no CONN_MAX_AGE (none can be set from the
  environment), so as shipped it opens a PostgreSQL connection for every request; a
  deployment that keeps them is measured too (`KEPT_WSGI`). The connections each side opened
  while the clients ran come from PostgreSQL's own count (`pg_stat_database.sessions`,
  `BackendCpu.opened`), over the requests answered;
* its production server: Label Studio's image serves with uwsgi (`UWSGI`), not gunicorn.

A submit that annotate_load sends twice (a retry with the same idempotency key, one in ten) is
sent once to Label Studio, which has no idempotency key (a second POST would add a second
annotation); "submit" figures count first submits only, for both (Discern's CPU an item
includes its retries).
"""

from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(HERE))

import annotate_load  # noqa: E402
import venvs  # noqa: E402

LABEL_STUDIO = ["label-studio==1.23.2", "gunicorn", "uwsgi"]
PG = "postgres://discern:discern@127.0.0.1:5432"
LABEL_CONFIG = """<View>
  <Text name="text" value="$text"/>
  <Choices name="verdict" toName="text" choice="single" showInline="true">
    <Choice value="valid"/><Choice value="invalid"/><Choice value="score-invariant"/>
    <Choice value="not-relevant"/><Choice value="not-sure"/>
  </Choices>
</View>"""
# Users, tokens and the organization, made in Label Studio's own Django (its manage.py shell).
MAKE_USERS = """
from organizations.models import Organization
from rest_framework.authtoken.models import Token
from users.models import User
owner = User.objects.create_superuser(email="owner@bench.local", password="bench-password-1",
                                      username="owner")
org = Organization.create_organization(created_by=owner, title="bench")
owner.active_organization = org
owner.save()
tokens = {"owner": Token.objects.get_or_create(user=owner)[0].key}
for a in range(%(annotators)d):
    user = User.objects.create_user(email=f"a{a}@bench.local", password="bench-password-1",
                                    username=f"bench-annotator-{a}")
    org.add_user(user)
    user.active_organization = org
    user.save()
    tokens[user.username] = Token.objects.get_or_create(user=user)[0].key
try:  # legacy tokens (Authorization: Token ...) on, if this version can turn them off
    from jwt_auth.models import JWTSettings
    JWTSettings.objects.update_or_create(organization=org,
                                         defaults={"legacy_api_tokens_enabled": True})
except ImportError:
    pass
import json
print("TOKENS " + json.dumps(tokens))
"""


def perturbations(n: int) -> list[dict[str, str]]:
    """annotate_load's items and perturbations: the same seed, texts and negation."""
    rng = random.Random(7)
    tasks = []
    for _ in range(n):
        original = annotate_load.text(rng)
        words = original.split(" ")
        at = rng.randrange(len(words))
        words[at : at + 1] = ["not", words[at]]
        tasks.append({"text": " ".join(words), "original": original})
    return tasks


# --- Label Studio -------------------------------------------------------------------------


# Label Studio's production server: its image's `label-studio-uwsgi` command runs
# `uwsgi --ini deploy/uwsgi.ini` (HumanSignal/label-studio, deploy/docker-entrypoint.sh; the
# docker-compose.yml of its docs runs that command behind nginx). These are that ini's
# settings; left out: its stats server (a port of its own), its pid file in /tmp and its JSON
# log format. Its processes are UWSGI_PROCESSES (default twice the cores) with
# UWSGI_NUMBER_OF_THREADS threads (default 1): here `--workers` processes of 1 thread.
UWSGI = {
    "module": "core.wsgi:application",
    "master": "true",
    "cheaper": "true",
    "single-interpreter": "true",
    "threads": "1",
    "vacuum": "true",
    "die-on-term": "true",
    "buffer-size": "65535",
    "http-timeout": "300",
    "memory-report": "true",
    "auto-procname": "true",
    "procname-prefix": "ls-",
    "need-app": "true",
    "env": "APP_WEBSERVER=uwsgi",
    "ignore-sigpipe": "true",
    "ignore-write-errors": "true",
    "disable-write-exception": "true",
    "harakiri": "120",
    "post-buffering": "4096",
    "disable-logging": "true",
    "log-5xx": "true",
    "enable-threads": "true",
    "thunder-lock": "true",
    "lazy-apps": "true",
    "max-requests": "5000",
    "reload-on-rss": "2048",
    "worker-reload-mercy": "300",
}
# Label Studio's settings (core/settings/base.py, 1.23.2) give its database no CONN_MAX_AGE
# and read none from the environment: Django's default, 0, a new connection for every
# request. To measure it with connections kept, the bench serves this WSGI module instead of
# core.wsgi: the same application and settings, then CONN_MAX_AGE set on the database's
# settings (the dict each thread's connection reads when it connects, before any request).
# (A settings module of our own that imported theirs would not load: theirs reads
# django.conf.settings while it is being imported.)
KEPT_WSGI = """from core.wsgi import application  # noqa: F401  (Label Studio's own)
from django.conf import settings

settings.DATABASES["default"]["CONN_MAX_AGE"] = %(age)d
"""


class LabelStudio:
    def __init__(
        self, venv: Path, database: str, port: int, workers: int, data_dir: Path, server: str
    ):
        self.venv, self.port, self.workers, self.server = venv, port, workers, server
        self.data_dir = data_dir
        self.base = f"http://127.0.0.1:{port}"
        self.package = Path(
            subprocess.run(
                [str(venv / "bin" / "python"), "-c",
                 "import label_studio, os; print(os.path.dirname(label_studio.__file__))"],
                check=True, capture_output=True, text=True,
            ).stdout.strip()
        )  # fmt: skip
        name = database.rsplit("/", 1)[1]
        self.database = database
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("DJANGO", "DATABASE"))},
            "DJANGO_SETTINGS_MODULE": "core.settings.label_studio",
            "DJANGO_DB": "default",
            "POSTGRE_NAME": name,
            "POSTGRE_USER": "discern",
            "POSTGRE_PASSWORD": "discern",
            "POSTGRE_HOST": "127.0.0.1",
            "POSTGRE_PORT": "5432",
            "LABEL_STUDIO_BASE_DATA_DIR": str(data_dir),
            "DEBUG": "false",
            "LOG_LEVEL": "WARNING",
            "SECRET_KEY": "bench-only-secret",
            "LABEL_STUDIO_HOST": self.base,
            # no calls home from the loopback benchmark (error reports, version checks)
            "SENTRY_DSN": "",
            "FRONTEND_SENTRY_DSN": "",
            "LATEST_VERSION_CHECK": "false",
            "COLLECT_ANALYTICS": "false",
        }
        self.log = data_dir / "label-studio.log"
        self.wsgi = "core.wsgi:application"

    def use(self, database: str, conn_max_age: int = 0) -> None:
        """Serve this database from now on (a round's fresh copy of the set-up one), with
        Label Studio's own settings (`conn_max_age` 0) or those and CONN_MAX_AGE (KEPT_WSGI)."""
        self.database = database
        self.env["POSTGRE_NAME"] = database.rsplit("/", 1)[1]
        self.wsgi = "core.wsgi:application"
        self.env.pop("PYTHONPATH", None)
        if conn_max_age:
            module = f"bench_kept_{conn_max_age}"
            (self.data_dir / f"{module}.py").write_text(KEPT_WSGI % {"age": conn_max_age})
            self.wsgi = f"{module}:application"
            self.env["PYTHONPATH"] = str(self.data_dir)

    def manage(self, *args: str) -> str:
        done = subprocess.run(
            [str(self.venv / "bin" / "python"), str(self.package / "manage.py"), *args],
            cwd=self.package, env=self.env, capture_output=True, text=True,
        )  # fmt: skip
        if done.returncode:
            raise SystemExit(f"label studio manage.py {args[0]} failed:\n{done.stderr[-3000:]}")
        return done.stdout

    def setup(self, tasks: list[dict[str, str]], annotators: int) -> tuple[int, dict[str, str]]:
        import json

        import httpx

        annotate_load.recreate(self.database)
        started = time.perf_counter()
        self.manage("migrate", "--no-input", "-v0")
        out = self.manage("shell", "-c", MAKE_USERS % {"annotators": annotators})
        tokens = json.loads(out.split("TOKENS ", 1)[1].splitlines()[0])
        print(f"label studio: schema and users in {time.perf_counter() - started:.0f} s")
        server = self.serve("gunicorn")  # the set-up's import, not measured
        try:
            owner = httpx.Client(
                base_url=self.base, headers={"Authorization": f"Token {tokens['owner']}"},
                timeout=600,
            )  # fmt: skip
            project = owner.post(
                "/api/projects/",
                json={
                    "title": "bench",
                    "label_config": LABEL_CONFIG,
                    "maximum_annotations": 3,
                    "overlap_cohort_percentage": 100,
                    "sampling": "Sequential sampling",
                    "show_skip_button": False,
                },
            )
            project.raise_for_status()
            pk = project.json()["id"]
            started = time.perf_counter()
            for at in range(0, len(tasks), 5000):
                owner.post(
                    f"/api/projects/{pk}/import", json=tasks[at : at + 5000]
                ).raise_for_status()
            print(
                f"label studio: {len(tasks)} tasks imported through the API in "
                f"{time.perf_counter() - started:.0f} s"
            )
        finally:
            self.stop(server)
        with __import__("psycopg").connect(self.database) as conn:
            conn.execute("ANALYZE")
        return pk, {k: v for k, v in tokens.items() if k != "owner"}

    def command(self, server: str) -> list[str]:
        if server == "gunicorn":
            return [
                str(self.venv / "bin" / "gunicorn"), self.wsgi,
                "-w", str(self.workers), "-b", f"127.0.0.1:{self.port}",
                "--log-level", "warning", "--timeout", "600",
            ]  # fmt: skip
        settings = {
            **UWSGI,
            "module": self.wsgi,
            "chdir": str(self.package),
            "http": f"127.0.0.1:{self.port}",
            "processes": str(self.workers),
            "pidfile": str(self.data_dir / "uwsgi.pid"),
        }
        ini = self.data_dir / "uwsgi.ini"
        ini.write_text("[uwsgi]\n" + "".join(f"{k} = {v}\n" for k, v in settings.items()))
        return [str(self.venv / "bin" / "uwsgi"), "--ini", str(ini)]

    def serve(self, server: str | None = None) -> subprocess.Popen:
        """Label Studio's server (`self.server`, or gunicorn for the set-up's import)."""
        import httpx

        server = subprocess.Popen(
            self.command(server or self.server),
            cwd=self.package, env=self.env, stdout=self.log.open("a"), stderr=subprocess.STDOUT,
        )  # fmt: skip
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.base}/health", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.5)
        else:
            server.terminate()
            tail = self.log.read_text()[-3000:]
            raise SystemExit(f"Label Studio's server did not start; its log ends:\n{tail}")
        warm = [
            threading.Thread(target=lambda: httpx.get(f"{self.base}/health", timeout=60))
            for _ in range(self.workers * 8)
        ]
        for thread in warm:
            thread.start()
        for thread in warm:
            thread.join()
        return server

    @staticmethod
    def stop(server: subprocess.Popen) -> None:
        server.terminate()
        server.wait(timeout=60)


class LabelStudioAnnotator:
    """annotate_load's annotator interface over Label Studio's API."""

    def __init__(self, base: str, username: str, token: str, project: int, plain: bool):
        self.username = username
        self.http = annotate_load.client(base, plain, {"Authorization": f"Token {token}"})
        self.project = project
        self.keys: set[str] = set()

    def next(self):
        response = self.http.get(f"/api/projects/{self.project}/next/")
        if response.status_code == 404:
            return None, response
        return (response.json()["id"] if response.status_code == 200 else -1), response

    def submit(self, task: int, verdict: str, key: str):
        if key in self.keys:  # annotate_load's retry: Label Studio would store it twice
            return True, None
        self.keys.add(key)
        body = {
            "result": [
                {
                    "from_name": "verdict",
                    "to_name": "text",
                    "type": "choices",
                    "value": {"choices": [verdict]},
                }
            ],
            "project": self.project,
            "lead_time": 1.0,
        }
        response = self.http.post(f"/api/tasks/{task}/annotations/", json=body)
        return response.status_code in (200, 201), response


def label_studio_round(
    ls: LabelStudio, project: int, tokens, clients: int, seconds: float, plain: bool
):
    annotate_load.vacuum(ls.database)  # the upkeep annotate_load gives Discern's, same point
    server = ls.serve()
    try:
        workers = [
            LabelStudioAnnotator(ls.base, name, key, project, plain)
            for name, key in sorted(tokens.items())[:clients]
        ]
        tally = annotate_load.Tally()
        deadline = time.monotonic() + seconds
        # CPU over the clients' span, as annotate_load counts Discern's: the server's
        # processes (gunicorn's workers; uwsgi's workers and its HTTP router)
        gunicorn = annotate_load._children(server.pid)
        server_cpu = annotate_load.cpu_seconds(gunicorn)
        backends = annotate_load.BackendCpu(ls.database)  # one a request here: see its doc
        backends.start()
        started = time.monotonic()
        threads = [
            threading.Thread(target=annotate_load.annotate, args=(w, tally, deadline, 0.0, i))
            for i, w in enumerate(workers)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.monotonic() - started
        server_cpu = annotate_load.cpu_seconds(gunicorn) - server_cpu
        database_cpu = backends.stop()
    finally:
        ls.stop(server)
    opened = backends.opened()
    if tally.errors:
        print(f"  label studio errors: {dict(tally.errors)}")
    items = max(len(tally.submit_ms), 1)
    requests = len(tally.next_ms) + len(tally.submit_ms)
    return {
        "connections": opened / max(requests, 1),
        "done": len(tally.submit_ms),
        "ran_out": tally.ran_out,
        "server_ms": server_cpu / items * 1000,
        "database_ms": database_cpu / items * 1000,
        "items_s": len(tally.submit_ms) / elapsed,
        "next_p50": annotate_load.percentile(tally.next_ms, 0.5),
        "next_p95": annotate_load.percentile(tally.next_ms, 0.95),
        "submit_p50": annotate_load.percentile(tally.submit_ms, 0.5),
        "submit_p95": annotate_load.percentile(tally.submit_ms, 0.95),
        "errors": sum(tally.errors.values()),
    }


# --- Discern ------------------------------------------------------------------------------

LINE = re.compile(
    r"^(next|submit)\s+n=\s*(\d+)\s+([\d.]+)/s\s+p50\s+([\d.na]+) ms\s+p95\s+([\d.na]+) ms", re.M
)
ITEM_CPU = re.compile(r"an item \(.*\): server ([\d.na]+) ms, PostgreSQL ([\d.na]+) ms")
RAN_OUT = re.compile(r"out of work: (\d+) of")
OPENED = re.compile(r"connections opened to PostgreSQL: \d+ while the clients ran, ([\d.]+) a")


def discern_setup(args, database: str) -> None:
    """The template database: annotate_load's set-up for 20 annotators, no load."""
    command = [
        sys.executable, str(ROOT / "bench" / "annotate_load.py"),
        "--database", database, "--perturbations", str(args.perturbations),
        "--annotators", "20", "--setup-only",
    ]  # fmt: skip
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"annotate_load.py --setup-only failed:\n{done.stdout}\n{done.stderr}")
    print("  " + done.stdout.strip().replace("\n", "\n  "), flush=True)


def discern_round(args, database: str, clients: int) -> dict[str, float]:
    command = [
        sys.executable, str(ROOT / "bench" / "annotate_load.py"),
        "--database", database, "--perturbations", str(args.perturbations),
        "--annotators", str(clients), "--seconds", str(args.seconds),
        "--workers", str(args.workers), "--port", str(args.port), "--think", "0",
        "--client", args.client, "--reuse",
    ]  # fmt: skip
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    found = {m.group(1): m for m in LINE.finditer(done.stdout)}
    cpu, ran_out = ITEM_CPU.search(done.stdout), RAN_OUT.search(done.stdout)
    opened = OPENED.search(done.stdout)
    if set(found) != {"next", "submit"} or not cpu or not ran_out or not opened:
        raise SystemExit(f"unexpected output of annotate_load.py:\n{done.stdout}\n{done.stderr}")
    if done.returncode:  # a verdict lost or stored twice, or an error: annotate_load says which
        raise SystemExit(f"annotate_load.py found problems:\n{done.stdout}\n{done.stderr}")
    errors = re.search(r"errors: (\d+)", done.stdout)
    return {
        "connections": float(opened.group(1)),
        "done": int(found["submit"].group(2)),
        "ran_out": int(ran_out.group(1)),
        "server_ms": float(cpu.group(1)),
        "database_ms": float(cpu.group(2)),
        "items_s": float(found["submit"].group(3)),
        "next_p50": float(found["next"].group(4)),
        "next_p95": float(found["next"].group(5)),
        "submit_p50": float(found["submit"].group(4)),
        "submit_p95": float(found["submit"].group(5)),
        "errors": int(errors.group(1)) if errors else -1,
    }


# --- the comparison -----------------------------------------------------------------------


def fresh_copy(template: str, copy: str) -> None:
    """`copy`, a new database made from `template` (a file copy): one round's fresh work."""
    import psycopg

    base, name = copy.split("?")[0].rsplit("/", 1)
    source = template.split("?")[0].rsplit("/", 1)[1]
    with psycopg.connect(f"{base}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{source}" STRATEGY FILE_COPY')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--perturbations", type=int, default=2492)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--workers", type=int, default=4, help="server processes, both sides")
    parser.add_argument("--port", type=int, default=8560, help="Discern's; Label Studio's +1")
    parser.add_argument("--clients", default="1,20")
    parser.add_argument("--database-prefix", default="discern_bench_peers")
    parser.add_argument(
        "--client", choices=["plain", "httpx"], default="plain", help="as annotate_load.py's"
    )
    parser.add_argument(
        "--ls-server",
        choices=["uwsgi", "gunicorn"],
        default="uwsgi",
        help="Label Studio's server: its image's uwsgi with its ini's settings (default), or "
        "gunicorn -w WORKERS",
    )
    parser.add_argument(
        "--ls-conn-max-age",
        default="0,60",
        help="Label Studio measured with each of these CONN_MAX_AGE (seconds, comma-separated):"
        " 0 is its settings as shipped (a connection a request), 60 keeps them",
    )
    args = parser.parse_args()
    clients = [int(c) for c in args.clients.split(",")]
    ages = [int(a) for a in args.ls_conn_max_age.split(",")]
    venv = venvs.ensure("label-studio", LABEL_STUDIO)
    ls_version = venvs.version(venv, "label-studio")
    name = f"{args.database_prefix}_{args.perturbations}"
    discern_template, ls_template = f"{PG}/{name}_ann", f"{PG}/{name}_ls"
    discern_db = f"{PG}/{name}_ann_round?conn_max_age=60"
    ls_db = f"{PG}/{name}_ls_round"
    capacity = args.perturbations * 3
    loads = [os.getloadavg()]
    sides = ["discern", *(f"ls-{age}" for age in ages)]

    def label(side: str) -> str:
        if side == "discern":
            return f"Discern (gunicorn -w {args.workers}, conn_max_age 60)"
        server = (
            f"uwsgi, {args.workers} processes x 1 thread"
            if args.ls_server == "uwsgi"
            else f"gunicorn -w {args.workers}"
        )
        return f"Label Studio {ls_version} ({server}, CONN_MAX_AGE {side[3:]})"

    print(f"setup: Discern, {args.perturbations} perturbations (annotate_load.py)", flush=True)
    discern_setup(args, discern_template)
    with tempfile.TemporaryDirectory() as data_dir:
        ls = LabelStudio(
            venv, ls_template, args.port + 1, args.workers, Path(data_dir), args.ls_server
        )
        print(f"setup: Label Studio {ls_version}, the same texts as tasks", flush=True)
        project, tokens = ls.setup(perturbations(args.perturbations), 20)
        print(
            f"every round: a fresh copy of each side's database ({capacity:,} judgements to "
            f"hand out), VACUUM ANALYZE (and CHECKPOINT where allowed), then the server",
            flush=True,
        )
        runs: dict[tuple[str, int], list[dict[str, float]]] = {}
        invalid = []
        for round_ in range(1, args.rounds + 1):
            for n in clients:
                for side in sides:
                    if side == "discern":
                        fresh_copy(discern_template, discern_db)
                        result = discern_round(args, discern_db, n)
                    else:
                        fresh_copy(ls_template, ls_db)
                        ls.use(ls_db, int(side[3:]))
                        result = label_studio_round(
                            ls, project, tokens, n, args.seconds, args.client == "plain"
                        )
                    valid = result["ran_out"] == 0
                    if valid:
                        runs.setdefault((side, n), []).append(result)
                    else:
                        invalid.append(f"round {round_}, {n} clients, {side}")
                    loads.append(os.getloadavg())
                    print(
                        f"round {round_}, {n:>2} clients, {side:<8} {result['items_s']:6.1f} "
                        f"items/s, next p50/p95 {result['next_p50']:7.1f}/{result['next_p95']:7.1f}"
                        f" ms, submit p50/p95 {result['submit_p50']:7.1f}/"
                        f"{result['submit_p95']:7.1f} ms, CPU an item app "
                        f"{result['server_ms']:.1f} + PostgreSQL {result['database_ms']:.1f} ms, "
                        f"{result['connections']:.3f} connections opened a request, "
                        f"errors {result['errors']}, {result['done']:,} of {capacity:,} "
                        f"judgements used, {result['ran_out']} clients out of work, "
                        f"load {os.getloadavg()[0]:.1f}"
                        + ("" if valid else " INVALID (ran out of work)"),
                        flush=True,
                    )

    def med(side: str, n: int, key: str) -> float:
        values = [r[key] for r in runs.get((side, n), [])]
        return statistics.median(values) if values else float("nan")

    def spread(side: str, n: int, key: str) -> str:
        values = [r[key] for r in runs.get((side, n), [])]
        return f" ({min(values):.1f}-{max(values):.1f})" if len(values) > 1 else ""

    print()
    print(
        f"annotation, {args.perturbations:,} perturbations, PostgreSQL, clients without pause; "
        f"medians of the valid rounds of {args.rounds} alternating rounds of {args.seconds:.0f} s"
        f", each on a fresh copy. CPU an item (its next and submit): the server's processes "
        f"(app) and the database's backends (PostgreSQL), apart.\n"
    )
    print(
        "| clients | side | items/s | next p50 / p95 | submit p50 | app CPU an item "
        "| PostgreSQL CPU an item | connections opened a request |"
    )
    print("|---" * 8 + "|")
    d = "discern"
    for n in clients:
        for side in sides:
            print(
                f"| {n} | {label(side)} | {med(side, n, 'items_s'):.1f}"
                f"{spread(side, n, 'items_s')} | {med(side, n, 'next_p50'):.0f} / "
                f"{med(side, n, 'next_p95'):.0f} ms | {med(side, n, 'submit_p50'):.0f} ms "
                f"| {med(side, n, 'server_ms'):.1f} ms | {med(side, n, 'database_ms'):.1f} ms "
                f"| {med(side, n, 'connections'):.3f} |"
            )
        for side in sides[1:]:
            print(
                f"| {n} | Discern against CONN_MAX_AGE {side[3:]} "
                f"| **{med(d, n, 'items_s') / med(side, n, 'items_s'):.1f}x** "
                f"| {med(side, n, 'next_p50') / med(d, n, 'next_p50'):.1f}x / "
                f"{med(side, n, 'next_p95') / med(d, n, 'next_p95'):.1f}x faster "
                f"| {med(side, n, 'submit_p50') / med(d, n, 'submit_p50'):.1f}x faster "
                f"| {med(side, n, 'server_ms') / med(d, n, 'server_ms'):.1f}x less "
                f"| {med(side, n, 'database_ms') / med(d, n, 'database_ms'):.1f}x less | |"
            )
    print(
        f"\nload average (1, 5, 15 min) from {' '.join(f'{x:.1f}' for x in loads[0])} before "
        f"to {' '.join(f'{x:.1f}' for x in loads[-1])} after; 1 min: "
        f"{min(x[0] for x in loads):.1f}-{max(x[0] for x in loads):.1f}; {os.cpu_count()} cores"
    )
    if invalid:
        print(
            f"INVALID: a client ran out of work in {len(invalid)} round(s) ({'; '.join(invalid)}):"
            " left out of the medians; raise --perturbations or lower --seconds",
            file=sys.stderr,
        )
        sys.exit(1)


if __name__ == "__main__":
    main()
