"""Annotation under load: "next item" and "submit" latency with many annotators at once.

A fresh PostgreSQL database gets the catalog, one dataset of N source items with one
perturbation each (default 50,000, spread over the 18 aspect-targeted kinds; their diffs
stored as the worker stores them after an import) and a study whose perturbations each need
`--overlap` vettings; its plan is built. A real server (gunicorn, on loopback) serves it, and
`--annotators` threads, each an annotator with their own HTTP client (the standard library's
`http.client`; `--client httpx` for httpx's, as before 2026-11-25), ask for their next item
and submit a verdict, over and over, for `--seconds`. One submit in ten is sent twice with the
same idempotency key (a retry). At the end the database is checked:
every acknowledged verdict is stored (no loss), none twice (no duplicates), no perturbation has
more than `--overlap` vettings. An annotator told there is no work left stops early; the run
prints how many did ("out of work"), and such a run measured less than `--seconds` of load.

    .venv/bin/python bench/annotate_load.py [--database postgres://...:5432/discern_bench_ann?conn_max_age=60]
        [--perturbations 50000] [--annotators 20] [--overlap 3] [--seconds 60] [--workers 4]
        [--think 0] [--mode api|api-chained|pages] [--reuse] [--setup-only] [--no-diffs]
        [--client plain|httpx]

`--mode api` uses the REST API (POST vetting/next/, POST vettings/); `--mode api-chained` the
same API with POST vettings/?next=true, whose answer carries the next unit (vetting/next/ once,
then one round trip an item); `--mode pages` drives the htmx pages as the browser does: GET
vet/ once ("page"), then POST verdict/ ("submit"), whose answer is the next item's HTML, so
there "submit" is next item and submit in one.
`--think` adds a pause between items (seconds, uniform 0..2x), as people read before answering;
with it, the annotators also start at random moments within the first 2x seconds.
`--reuse` keeps the database of a previous run (skips the setup); `--setup-only` makes the
database and stops (no server, no load).

It prints the server's CPU per request (the gunicorn workers' user + system time, read from
/proc before and after the load, over the requests answered; PostgreSQL's backends apart,
`BackendCpu`), the connections opened to PostgreSQL while the clients ran, and
the targets of issue 17: CPU per request at most 5 ms; with no pause, at least 4x the items/s
of `--baseline` (the figure measured before the work, same machine); with a pause of 1 s, p95
under 50 ms for both calls.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import re
import statistics
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from json import dumps as json_dumps
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DB = "postgres://discern:discern@127.0.0.1:5432/discern_bench_ann?conn_max_age=60"
PASSWORD = "bench-password-1"
WORDS = [
    *("council", "library", "budget", "river", "bridge", "school", "report", "survey"),
    *("market", "harbour", "station", "engineer", "resident", "mayor", "village", "storm"),
    *("winter", "summer", "festival", "museum", "hospital", "farmer", "railway", "project"),
    *("plan", "vote", "meeting", "year", "month", "week", "cost", "road", "traffic", "water"),
]
VERDICTS = ["valid", "valid", "valid", "invalid", "score-invariant", "not-relevant", "not-sure"]


def django_setup(database_url: str) -> None:
    os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("DJANGO_DEBUG", "true")
    os.environ.setdefault("DJANGO_LOG_LEVEL", "WARNING")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


def recreate(database_url: str) -> None:
    import psycopg

    base, name = database_url.split("?")[0].rsplit("/", 1)
    with psycopg.connect(f"{base}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def text(rng: random.Random, n: int = 60) -> str:
    sentences, words = [], []
    for i in range(n):
        words.append(rng.choice(WORDS))
        if i % 12 == 11:
            sentences.append(" ".join(words).capitalize() + ".")
            words = []
    return " ".join(sentences)


def populate(n: int, annotators: int, overlap: int, diffs: bool = True) -> dict[str, str]:
    """Catalog, items, perturbations, study, users; returns {username: API token}."""
    from django.core.management import call_command
    from rest_framework.authtoken.models import Token

    from apps.accounts.models import User
    from apps.annotation.models import Study, StudyMembership
    from apps.annotation.services import study_plan_build
    from apps.catalog.loading import catalog_load
    from apps.catalog.models import Criterion, PerturbationKind, Task
    from apps.corpus.models import Dataset, Origin, Perturbation, PerturbationVersion, SourceItem

    call_command("migrate", verbosity=0)
    catalog_load()
    task = Task.objects.get(slug="summarization")
    kinds = list(PerturbationKind.objects.filter(family="aspect-targeted").order_by("slug"))
    owner = User.objects.create_user("bench-researcher", password=PASSWORD, role="researcher")
    dataset = Dataset.objects.create(name="bench", task=task, owner=owner)
    rng = random.Random(7)
    started = time.perf_counter()
    for start in range(0, n, 5000):
        size = min(5000, n - start)
        items = SourceItem.objects.bulk_create(
            SourceItem(dataset=dataset, external_id=f"b{start + i}", task=task, original=text(rng))
            for i in range(size)
        )
        perturbations = []
        for i, item in enumerate(items):
            words = item.original.split(" ")
            at = rng.randrange(len(words))
            words[at : at + 1] = ["not", words[at]]
            perturbations.append(
                Perturbation(
                    item=item,
                    kind=kinds[(start + i) % len(kinds)],
                    text=" ".join(words),
                    explanation="Added a negation.",
                    origin=Origin.IMPORT,
                )
            )
        Perturbation.objects.bulk_create(perturbations)
        PerturbationVersion.objects.bulk_create(
            PerturbationVersion(perturbation=p, number=1, text=p.text, explanation=p.explanation)
            for p in perturbations
        )
    print(f"setup: {n} items and perturbations in {time.perf_counter() - started:.1f} s")
    if diffs:
        _store_diffs(dataset)
    else:
        print("setup: no diffs stored ahead (--no-diffs: each computed on a text's first showing)")
    study = Study.objects.create(
        slug="bench", name="Bench study", owner=owner, vetting_overlap=overlap
    )
    study.datasets.add(dataset)
    study.kinds.set(kinds)
    study.criteria.set(Criterion.objects.filter(source="discern", description_type="default"))
    tokens = {}
    for a in range(annotators):
        user = User.objects.create_user(f"bench-annotator-{a}", password=PASSWORD)
        StudyMembership.objects.create(study=study, user=user, role="annotator")
        tokens[user.username] = Token.objects.create(user=user).key
    started = time.perf_counter()
    summary = study_plan_build(study=study)
    print(
        f"setup: plan built in {time.perf_counter() - started:.1f} s "
        f"({summary.vetting_slots} vetting slots, {summary.criterion_assignments} criteria dealt)"
    )
    _analyze()
    return tokens


def _store_diffs(dataset) -> None:
    """What the worker does once an import is committed (docs/annotation.md, "Speed"); code
    from before that (the start of issue 17) computes each diff on a text's first showing."""
    try:
        from apps.corpus.diffs import diffs_store_timed
    except ImportError:
        print("setup: no diffs stored ahead (this code computes them when a text is first shown)")
        return
    stored, seconds = diffs_store_timed(dataset_id=dataset.pk)
    print(f"setup: diffs of {stored} texts stored in {seconds:.1f} s (as the worker does)")


def _analyze() -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def existing_tokens() -> dict[str, str]:
    from rest_framework.authtoken.models import Token

    return dict(
        Token.objects.filter(user__username__startswith="bench-annotator-").values_list(
            "user__username", "key"
        )
    )


# --- the server ---------------------------------------------------------------------------


def serve(database_url: str, port: int, workers: int) -> subprocess.Popen:
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "DJANGO_SECRET_KEY": "bench-only-secret",
        "DJANGO_DEBUG": "false",
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
        "DJANGO_LOG_LEVEL": "WARNING",
    }
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "config.wsgi",
            "-w",
            str(workers),
            "-b",
            f"127.0.0.1:{port}",
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env=env,
    )
    import httpx

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.3)
    else:
        server.terminate()
        raise SystemExit("gunicorn did not start")
    # Warm every worker up (imports, URL resolving) before anything is timed.
    warm = [
        threading.Thread(target=lambda: httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=30))
        for _ in range(workers * 8)
    ]
    for thread in warm:
        thread.start()
    for thread in warm:
        thread.join()
    return server


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry.name))
    return found


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time of these processes (from /proc/<pid>/stat)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / ticks


def vacuum(database_url: str) -> None:
    """VACUUM ANALYZE the database before a measured run, as autovacuum keeps a deployment's:
    the PostgreSQL of a CI machine may run without it (`autovacuum = off`), and then every
    run on a reused database meets the dead rows of all the runs before (the open slots'
    index fills with slots done long ago) and statistics from before anyone worked.

    Then a CHECKPOINT, so that the set-up's writes (hundreds of MB of WAL for 50,000
    perturbations) are not flushed during the measured run: a checkpoint the set-up started
    spreads its writes over minutes, and on a slow disk the runs it overlapped lost up to
    half their items/s to it. It needs the role `pg_checkpoint` (PostgreSQL 15) or a
    superuser; without, the run goes on and says so."""
    import psycopg

    started = time.monotonic()
    with psycopg.connect(database_url.split("?")[0], autocommit=True) as conn:
        autovacuum = conn.execute("SHOW autovacuum").fetchone()[0]
        conn.execute("VACUUM ANALYZE")
        try:
            conn.execute("CHECKPOINT")
            flushed = "checkpoint done"
        except psycopg.errors.InsufficientPrivilege:
            flushed = "no checkpoint (grant pg_checkpoint to this role for steadier runs)"
    print(
        f"vacuumed and analyzed in {time.monotonic() - started:.1f} s (autovacuum {autovacuum}); "
        + flushed
    )


class BackendCpu:
    """The CPU time (user + system, from /proc) of one database's PostgreSQL backends over a
    span, counting those that start and end within it: a server that opens a connection a
    request (Label Studio: Django's default `CONN_MAX_AGE` 0) has backends that live for one
    request, which a reading before and after would miss. A thread reads the postmaster's
    children every 20 ms and keeps, for each backend of the database (by its process title,
    "postgres: ... <user> <database> ..."), its first and last reading; a backend born during
    the span counts from zero. The CPU a backend spends after its last reading is missed, so
    the figure is low by up to 20 ms of a backend's time at its end.

    `opened()`, called once the server has stopped, says how many connections were opened to
    the database from `start` on: PostgreSQL's own count (`pg_stat_database.sessions`), read
    through one connection kept open over the span, so the reading adds none of its own."""

    def __init__(self, database_url: str, every: float = 0.02):
        import psycopg

        url = database_url.split("?")[0]
        self.url = url
        self.name = url.rsplit("/", 1)[1].encode()
        with psycopg.connect(url, autocommit=True) as conn:  # read while its backend lives
            (pid,) = conn.execute("SELECT pg_backend_pid()").fetchone()
            stat = Path(f"/proc/{pid}/stat").read_text()
        self.postmaster = int(stat.rsplit(")", 1)[1].split()[1])
        self.every = every
        self.first: dict[tuple[int, int], float] = {}
        self.last: dict[tuple[int, int], float] = {}
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def _read(self, start: bool) -> None:
        ticks = os.sysconf("SC_CLK_TCK")
        try:
            children = Path(f"/proc/{self.postmaster}/task/{self.postmaster}/children")
            pids = children.read_text().split()
        except OSError:
            return
        for pid in pids:
            try:
                title = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").split()
                if self.name not in title:
                    continue
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            key = (int(pid), int(fields[19]))  # pid and start time: a pid may be reused
            cpu = (int(fields[11]) + int(fields[12])) / ticks
            self.first.setdefault(key, cpu if start else 0.0)
            self.last[key] = cpu

    def _loop(self) -> None:
        while not self.stopped.wait(self.every):
            self._read(start=False)

    def _sessions(self) -> int:
        self.reader.execute("SELECT pg_stat_clear_snapshot()")
        row = self.reader.execute(
            "SELECT sessions FROM pg_stat_database WHERE datname = %s", [self.name.decode()]
        ).fetchone()
        return int(row[0])

    def start(self) -> None:
        import psycopg

        self.reader = psycopg.connect(self.url, autocommit=True)
        time.sleep(0.05)  # its own connection reaches the count first
        self.sessions = self._sessions()
        self._read(start=True)
        self.thread.start()

    def stop(self) -> float:
        """The backends' CPU seconds since `start`."""
        self.stopped.set()
        self.thread.join()
        self._read(start=False)
        return sum(self.last[key] - self.first[key] for key in self.last)

    def opened(self) -> int:
        """Connections opened to the database since `start` (call it after the server has
        stopped: a backend's count reaches the statistics by its exit at the latest)."""
        time.sleep(0.2)
        try:
            return self._sessions() - self.sessions
        finally:
            self.reader.close()


# --- the annotators -----------------------------------------------------------------------


@dataclass
class Tally:
    next_ms: list[float] = field(default_factory=list)
    submit_ms: list[float] = field(default_factory=list)
    retry_ms: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    acknowledged: set[tuple[int, str]] = field(default_factory=set)
    keys: set[str] = field(default_factory=set)
    ran_out: int = 0  # annotators told "no work left" before the deadline
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, name: str, ms: float) -> None:
        with self.lock:
            getattr(self, name).append(ms)

    def error(self, what: str) -> None:
        with self.lock:
            self.errors[what] += 1


class Reply:
    """What the annotators read of an answer (httpx's names)."""

    def __init__(self, status_code: int, body: bytes):
        self.status_code, self.text = status_code, body.decode()

    def json(self) -> Any:
        return json.loads(self.text)


class PlainClient:
    """One annotator's HTTP client on the standard library's `http.client`: the requests of
    the measured loop, at under half of httpx's CPU a request (the clients share the
    machine's cores with the server; docs/benchmarks.md). Sends `headers` with every request
    and keeps the cookies the server sets."""

    def __init__(self, base: str, headers: dict[str, str], cookies: dict[str, str]):
        host, port = base.removeprefix("http://").split(":")
        self.connection = http.client.HTTPConnection(host, int(port), timeout=30)
        self.headers, self.cookies = dict(headers), dict(cookies)

    def get(self, path: str, headers: dict[str, str] | None = None) -> Reply:
        return self._send("GET", path, None, headers)

    def post(
        self, path: str, *, data=None, json=None, headers: dict[str, str] | None = None
    ) -> Reply:
        if json is not None:
            body, kind = json_dumps(json).encode(), "application/json"
        else:
            body, kind = urlencode(data or {}).encode(), "application/x-www-form-urlencoded"
        return self._send("POST", path, body, {**(headers or {}), "Content-Type": kind})

    def _send(self, method: str, path: str, body, headers) -> Reply:
        sent = {**self.headers, **(headers or {})}
        if self.cookies:
            sent["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        try:
            self.connection.request(method, path, body, sent)
            response = self.connection.getresponse()
        except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
            self.connection.close()  # the server closed a kept connection: once more
            self.connection.request(method, path, body, sent)
            response = self.connection.getresponse()
        for header in response.headers.get_all("Set-Cookie") or ():
            name, _, rest = header.partition("=")
            self.cookies[name.strip()] = rest.split(";", 1)[0]
        return Reply(response.status, response.read())


def client(base: str, plain: bool, headers: dict[str, str], cookies=None) -> Any:
    """The measured loop's client: `PlainClient`, or (`--client httpx`) httpx's."""
    if plain:
        return PlainClient(base, headers, dict(cookies or {}))
    import httpx

    return httpx.Client(
        base_url=base, headers=headers, cookies=cookies, timeout=30, follow_redirects=False
    )


class ApiAnnotator:
    def __init__(self, base: str, username: str, token: str, study: int, plain: bool = True):
        self.username = username
        self.http = client(base, plain, {"Authorization": f"Token {token}"})
        self.prefix = f"/api/v1/studies/{study}"

    def next(self):
        response = self.http.post(f"{self.prefix}/vetting/next/")
        if response.status_code == 204:
            return None, response
        return (response.json()["perturbation"] if response.status_code == 200 else -1), response

    def submit(self, perturbation: int, verdict: str, key: str):
        body = {"perturbation": perturbation, "verdict": verdict, "idempotency_key": key}
        response = self.http.post(f"{self.prefix}/vettings/", json=body)
        return response.status_code in (200, 201), response


class ChainedApiAnnotator(ApiAnnotator):
    """The API with `?next=true`: each submit's answer carries the next unit, one round trip
    an item (as the pages); "next" is asked only for the first unit."""

    def __init__(self, base: str, username: str, token: str, study: int, plain: bool = True):
        super().__init__(base, username, token, study, plain)
        self.current: int | None = None
        self.started = False

    def next(self):
        if self.started:  # the last answer already showed it
            return self.current, None
        perturbation, response = super().next()
        self.started, self.current = perturbation != -1, perturbation
        return perturbation, response

    def submit(self, perturbation: int, verdict: str, key: str):
        body = {"perturbation": perturbation, "verdict": verdict, "idempotency_key": key}
        response = self.http.post(f"{self.prefix}/vettings/?next=true", json=body)
        ok = response.status_code in (200, 201)
        if ok:
            following = response.json()["next"]
            self.current = None if following is None else following["perturbation"]
        return ok, response


class PageAnnotator:
    """The browser's requests: the vetting page, then htmx posts answered by the next item."""

    ITEM = re.compile(r'hx-post="/studies/\d+/vet/(\d+)/verdict/"')

    def __init__(self, base: str, username: str, token: str, study: int, plain: bool = True):
        import httpx

        self.username = username
        self.study = study
        with httpx.Client(base_url=base, timeout=30, follow_redirects=False) as signing_in:
            cookies = self._log_in(signing_in, username)
        headers = {"X-CSRFToken": cookies["csrftoken"], "HX-Request": "true"}
        self.http = client(base, plain, headers, cookies)
        self.current: int | None = None

    @staticmethod
    def _log_in(http, username: str) -> dict[str, str]:
        """The session's cookies, signed in through the login page (with httpx)."""
        login = http.get("/accounts/login/")
        csrf = http.cookies["csrftoken"]
        token_field = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', login.text)
        assert token_field, "no CSRF field on the login page"
        logged_in = http.post(
            "/accounts/login/",
            data={
                "username": username,
                "password": PASSWORD,
                "csrfmiddlewaretoken": token_field.group(1),
            },
            headers={"X-CSRFToken": csrf},
        )
        assert logged_in.status_code == 302, f"login of {username} failed"
        return dict(http.cookies.items())

    def _item(self, response) -> int | None:
        found = self.ITEM.search(response.text)
        return int(found.group(1)) if found else None

    def next(self):
        if self.current is not None:  # the last answer already showed it
            return self.current, None
        response = self.http.get(f"/studies/{self.study}/vet/")
        if response.status_code != 200:
            return -1, response
        self.current = self._item(response)
        return self.current, response

    def submit(self, perturbation: int, verdict: str, key: str):
        response = self.http.post(
            f"/studies/{self.study}/vet/{perturbation}/verdict/",
            data={"verdict": verdict, "note": "", "idempotency_key": key},
        )
        ok = response.status_code == 200
        if ok:
            self.current = self._item(response)
        return ok, response


ANNOTATORS = {"api": ApiAnnotator, "api-chained": ChainedApiAnnotator, "pages": PageAnnotator}


def annotate(worker, tally: Tally, deadline: float, think: float, seed: int) -> None:
    rng = random.Random(seed)
    if think:  # people do not all start in the same millisecond
        time.sleep(rng.uniform(0, 2 * think))
    while time.monotonic() < deadline:
        started = time.perf_counter()
        try:
            perturbation, response = worker.next()
        except Exception as exc:  # a load test counts every failure
            tally.error(f"next: {type(exc).__name__}")
            continue
        if response is not None:
            tally.add("next_ms", (time.perf_counter() - started) * 1000)
        if perturbation is None:  # no work left: the run measured less than --seconds
            with tally.lock:
                tally.ran_out += 1
            return
        if perturbation == -1:
            tally.error(f"next: HTTP {response.status_code}")
            continue
        if think:
            time.sleep(rng.uniform(0, 2 * think))
        key, verdict = str(uuid.uuid4()), rng.choice(VERDICTS)
        for attempt in range(2 if rng.random() < 0.1 else 1):
            started = time.perf_counter()
            try:
                ok, response = worker.submit(perturbation, verdict, key)
            except Exception as exc:
                tally.error(f"submit: {type(exc).__name__}")
                continue
            elapsed_ms = (time.perf_counter() - started) * 1000
            tally.add("retry_ms" if attempt else "submit_ms", elapsed_ms)
            if not ok:
                tally.error(f"submit: HTTP {response.status_code}")
                continue
            with tally.lock:
                tally.acknowledged.add((perturbation, worker.username))
                tally.keys.add(key)


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def report(name: str, values: list[float], seconds: float) -> None:
    print(
        f"{name:<8} n={len(values):>6}  {len(values) / seconds:6.1f}/s  "
        f"p50 {percentile(values, 0.50):6.1f} ms  p95 {percentile(values, 0.95):6.1f} ms  "
        f"p99 {percentile(values, 0.99):6.1f} ms  max {max(values, default=float('nan')):6.1f} ms"
        + (f"  mean {statistics.fmean(values):.1f}" if values else "")
    )


def check(tally: Tally, overlap: int, since) -> int:
    """Compare what the clients were told with what the database holds; return problems."""
    from django.db.models import Count

    from apps.annotation.models import JudgementChange, Vetting

    stored = set(
        Vetting.objects.filter(created_at__gte=since).values_list(
            "perturbation_id", "annotator__username"
        )
    )
    lost = tally.acknowledged - stored
    unacknowledged = stored - tally.acknowledged
    changes = JudgementChange.objects.filter(idempotency_key__in=list(tally.keys)).count()
    overfilled = (
        Vetting.objects.values("perturbation_id").annotate(n=Count("id")).filter(n__gt=overlap)
    ).count()
    print(
        f"judgements: {len(tally.acknowledged)} acknowledged, {len(stored)} stored, "
        f"lost {len(lost)}, stored but not acknowledged {len(unacknowledged)}, "
        f"changes {changes} for {len(tally.keys)} keys (duplicated {changes - len(tally.keys)}), "
        f"perturbations over {overlap} vettings: {overfilled}"
    )
    return len(lost) + (changes - len(tally.keys)) + overfilled


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database", default=DEFAULT_DB)
    parser.add_argument("--perturbations", type=int, default=50_000)
    parser.add_argument("--annotators", type=int, default=20)
    parser.add_argument("--overlap", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--think", type=float, default=0.0)
    parser.add_argument("--mode", choices=sorted(ANNOTATORS), default="api")
    parser.add_argument("--port", type=int, default=8911)
    parser.add_argument("--reuse", action="store_true")
    parser.add_argument("--setup-only", action="store_true", help="make the database, no load")
    parser.add_argument(
        "--client",
        choices=["plain", "httpx"],
        default="plain",
        help="the annotators' HTTP client: the standard library's (default) or httpx (the "
        "client of the figures before 2026-11-25, sixteenth session; 2-3x the CPU a request)",
    )
    parser.add_argument(
        "--no-diffs",
        action="store_true",
        help="store no diffs ahead: as annotators meet an import the worker has not got to yet",
    )
    parser.add_argument(
        "--baseline",
        type=float,
        default=0.0,
        help="items/s measured before the work (same command): the saturation target is 4x",
    )
    args = parser.parse_args()

    if not args.reuse:
        recreate(args.database)
    django_setup(args.database)
    if args.reuse:
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
    tokens = existing_tokens() if args.reuse else None
    if not tokens:
        tokens = populate(args.perturbations, args.annotators, args.overlap, not args.no_diffs)
    from django.utils import timezone

    from apps.annotation.models import Study, StudyPerturbation

    study = Study.objects.get(slug="bench").pk
    vacuum(args.database)
    if args.setup_only:
        return
    server = serve(args.database, args.port, args.workers)
    try:
        base = f"http://127.0.0.1:{args.port}"
        kind = ANNOTATORS[args.mode]
        plain = args.client == "plain"
        workers = [kind(base, name, key, study, plain) for name, key in sorted(tokens.items())]
        workers = workers[: args.annotators]
        tally = Tally()
        since = timezone.now()
        deadline = time.monotonic() + args.seconds
        gunicorn = _children(server.pid)
        server_cpu = cpu_seconds(gunicorn)
        backends = BackendCpu(args.database)
        backends.start()
        started = time.monotonic()
        cpu = time.process_time()
        threads = [
            threading.Thread(target=annotate, args=(w, tally, deadline, args.think, i))
            for i, w in enumerate(workers)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.monotonic() - started
        client_cpu = time.process_time() - cpu
        server_cpu = cpu_seconds(gunicorn) - server_cpu
        database_cpu = backends.stop()
    finally:
        server.terminate()
        server.wait(timeout=30)
    opened = backends.opened()
    print(
        f"{args.mode}: {len(workers)} annotators, {args.workers} gunicorn workers, "
        f"{StudyPerturbation.objects.count()} perturbations x {args.overlap} vettings, "
        f"think {args.think} s, "
        f"{elapsed:.0f} s, {os.cpu_count()} cores"
    )
    requests = len(tally.next_ms) + len(tally.submit_ms) + len(tally.retry_ms)
    print(
        f"load average now {os.getloadavg()[0]:.1f}; the clients ({args.client}) used "
        f"{client_cpu:.1f} s of CPU, {client_cpu / max(requests, 1) * 1000:.2f} ms a request"
    )
    report("page" if args.mode == "pages" else "next", tally.next_ms, elapsed)
    report("submit", tally.submit_ms, elapsed)
    report("retry", tally.retry_ms, elapsed)
    print(f"errors: {sum(tally.errors.values())} {dict(tally.errors)}")
    short = " (the run measured less load than --seconds)" if tally.ran_out else ""
    print(
        f"out of work: {tally.ran_out} of {len(workers)} annotators were told no work was left "
        f"before the end{short}"
    )
    print(
        f"connections opened to PostgreSQL: {opened} while the clients ran, "
        f"{opened / max(requests, 1):.3f} a request"
    )
    problems = check(tally, args.overlap, since)
    targets(args, tally, elapsed, server_cpu, requests, database_cpu)
    sys.exit(1 if problems or tally.errors else 0)


def targets(
    args, tally: Tally, elapsed: float, cpu: float, requests: int, database_cpu: float
) -> None:
    """The figures issue 17 sets, each with met / NOT met. A chained submit (api-chained) is
    the next item and the submit in one: it counts as the two requests it replaces."""
    chained = len(tally.submit_ms) + len(tally.retry_ms) if args.mode == "api-chained" else 0
    per_request = cpu / (requests + chained) * 1000 if requests else float("nan")
    items = len(tally.submit_ms) / elapsed
    answered = max(len(tally.submit_ms), 1)
    print(
        f"server CPU: {cpu:.1f} s in the {args.workers} gunicorn workers for {requests} requests"
        f" = {per_request:.2f} ms a request; PostgreSQL backends "
        f"{database_cpu / max(requests, 1) * 1000:.2f} ms a request"
    )
    print(
        f"an item (its next and submit, retries included): server {cpu / answered * 1000:.2f} ms,"
        f" PostgreSQL {database_cpu / answered * 1000:.2f} ms"
    )

    def verdict(ok: bool) -> str:
        return "met" if ok else "NOT met"

    counted = " (a chained submit counted as 2)" if chained else ""
    print(
        f"target CPU per request{counted} <= 5 ms: {per_request:.2f} ms, "
        f"{verdict(per_request <= 5)}"
    )
    if not args.think and args.baseline:
        ratio = items / args.baseline
        print(
            f"target items/s >= 4x baseline {args.baseline:g}: {items:.1f} items/s = "
            f"{ratio:.1f}x, {verdict(ratio >= 4)}"
        )
    if args.think == 1:
        for name, values in (("next", tally.next_ms), ("submit", tally.submit_ms)):
            if values:
                p95 = percentile(values, 0.95)
                print(f"target {name} p95 < 50 ms: {p95:.1f} ms, {verdict(p95 < 50)}")


if __name__ == "__main__":
    main()
