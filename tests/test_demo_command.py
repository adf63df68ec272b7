"""The README's first command brings the app up on the embedded default.

Runs `scripts/demo.sh` (what `make demo` runs) with no DATABASE_URL and no REDIS_URL, in a
fresh var/ folder: SQLite, the filesystem broker, a real worker. Then a user logs in over
HTTP, and an upload big enough to go to the worker is imported by it.
"""

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import time
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parent.parent
UNSET = (
    "DATABASE_URL",
    "REDIS_URL",
    "DJANGO_SECRET_KEY",
    "DJANGO_DEBUG",
    "DISCERN_QUEUE",
    "DISCERN_FAST_PASSWORD_HASHER",
    "DISCERN_LOAD_CATALOG",
    "DJANGO_SETTINGS_MODULE",
)


#: Verdicts that say no more than that the figure could not be told.
UNDECIDED = ("not measured", "no result", "too few texts to tell")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def demo(tmp_path, request):
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k not in UNSET}
    env.update(
        PORT=str(port), DISCERN_VAR_DIR=str(tmp_path / "var"), DISCERN_BACKGROUND_IMPORT_BYTES="200"
    )
    env["DISCERN_DEMO_MODEL_PORT"] = str(_free_port())
    env.update(getattr(request, "param", {}))  # a test's own settings
    (tmp_path / "var").mkdir()
    log = (tmp_path / "demo.log").open("w")
    process = subprocess.Popen(
        ["bash", "scripts/demo.sh"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        preexec_fn=_as_from_a_terminal,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # up: the banner printed (it waits for /healthz)
        assert process.poll() is None, (tmp_path / "demo.log").read_text()
        if "Discern is up at" in (tmp_path / "demo.log").read_text():
            assert httpx.get(f"{base}/healthz", timeout=5).status_code == 200
            break
        time.sleep(0.5)
    else:
        pytest.fail("demo did not come up in 2 minutes:\n" + (tmp_path / "demo.log").read_text())
    yield base, tmp_path, process
    _stop_group(process)
    log.close()


def _as_from_a_terminal() -> None:
    """In the child: the signals of a terminal act as in a user's shell, whatever the test run
    inherited. A test run started with `nohup`, or as a background job of a script, ignores
    SIGHUP or SIGINT, and a shell cannot trap a signal ignored when it starts: the demo would
    then outlive Ctrl-C and the hangup here, though not in a terminal."""
    for number in (signal.SIGHUP, signal.SIGINT, signal.SIGQUIT, signal.SIGTERM):
        signal.signal(number, signal.SIG_DFL)


def _stop_group(process: subprocess.Popen) -> None:
    """Stop the script, its web server and its worker (one process group); a worker still in
    its warm shutdown after 15 s is killed, so no test leaves a worker behind."""
    try:
        os.killpg(process.pid, signal.SIGTERM)
    except ProcessLookupError:  # already stopped by the test
        return
    process.wait(timeout=20)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        try:
            os.killpg(process.pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.5)
    os.killpg(process.pid, signal.SIGKILL)


def _login(client: httpx.Client, base: str, username: str) -> None:
    page = client.get(f"{base}/accounts/login/")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
    response = client.post(
        f"{base}/accounts/login/",
        data={"username": username, "password": "discern-demo", "csrfmiddlewaretoken": token},
    )
    assert response.status_code == 302, "demo login failed"


def test_make_demo_serves_the_demo_study_and_runs_the_worker(demo):
    base, folder, _ = demo
    printed = (folder / "demo.log").read_text()
    assert f"Discern is up at {base}/" in printed
    # the banner comes once the server answers, after its own /healthz request
    assert printed.index('"GET /healthz HTTP/1.1" 200') < printed.index("Discern is up")
    assert "researcher, annotator, expert" in printed
    assert (folder / "var" / "discern.sqlite3").exists()
    assert list((folder / "var" / "broker" / "control").glob("*.exchange"))  # kombu's, in var/
    with httpx.Client(follow_redirects=False, timeout=10) as client:
        _login(client, base, "researcher")
        home = client.get(f"{base}/")
        assert "Demo: do judges notice summary errors?" in home.text
        missing = client.get(f"{base}/no/such/page/")  # the site's page, not a list of routes
        assert missing.status_code == 404 and "There is nothing here" in missing.text
        assert "URLconf" not in missing.text
        page = client.get(f"{base}/imports/new/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
        rows = "".join(f'{{"id": "d{i}", "original": "Demo text {i}."}}\n' for i in range(50))
        response = client.post(
            f"{base}/imports/new/",
            data={"dataset": "via worker", "csrfmiddlewaretoken": token},
            files={"file": ("rows.jsonl", rows.encode())},
        )
        assert response.status_code == 302
        job_url = base + response.headers["location"]
        deadline = time.monotonic() + 60
        while "50 items and" not in (body := client.get(job_url).text):
            assert time.monotonic() < deadline, body
            assert "Failed" not in body, body
            time.sleep(0.5)


def _demo_workers(var_dir: Path) -> list[int]:
    """Celery workers started for this demo (found by their DISCERN_VAR_DIR)."""
    found = []
    marker = f"DISCERN_VAR_DIR={var_dir}".encode()
    for proc in Path("/proc").iterdir():
        try:
            cmdline = (proc / "cmdline").read_bytes()
            environ = (proc / "environ").read_bytes()
        except (OSError, ValueError):
            continue
        if b"celery" in cmdline and b"worker" in cmdline and marker in environ.split(b"\0"):
            found.append(int(proc.name))
    return found


def test_closing_the_terminal_stops_the_worker_too(demo):
    """A hangup (the terminal closed) goes to the script's whole process group."""
    _, folder, process = demo
    var_dir = folder / "var"
    assert _demo_workers(var_dir), "the demo's worker is not running"
    os.killpg(process.pid, signal.SIGHUP)
    process.wait(timeout=30)
    deadline = time.monotonic() + 30
    while _demo_workers(var_dir):
        assert time.monotonic() < deadline, "the worker outlived the closed terminal"
        time.sleep(0.5)
    # a Celery worker that gets the hangup itself re-executes (and outlives the script)
    assert "Restarting celery worker" not in (var_dir / "worker.log").read_text(errors="replace")


@pytest.mark.parametrize("demo", [{"DISCERN_STOP_GRACE": "5"}], indirect=True)
def test_ctrl_c_stops_the_demo_even_if_a_worker_hangs(demo, request):
    """A worker that no longer answers (here: stopped) is killed after the grace period."""
    _, folder, process = demo
    var_dir = folder / "var"
    hung = _demo_workers(var_dir)
    assert hung, "the demo's worker is not running"
    for pid in hung:
        os.kill(pid, signal.SIGSTOP)
    request.addfinalizer(lambda: [_kill(pid) for pid in hung])  # none left behind if this fails
    started = time.monotonic()
    # Ctrl-C reaches the script (the workers have their own session)
    os.killpg(process.pid, signal.SIGINT)
    process.wait(timeout=30)
    assert time.monotonic() - started < 15
    assert not _demo_workers(var_dir), "a hung worker outlived the demo"


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def test_an_audit_of_the_demo_study_reaches_a_verdict(demo):
    """As the banner says: the demo's texts are enough for an audit's verdicts. BLEU's audit,
    from the command line the banner shows, run by the demo's own worker."""
    base, folder, _ = demo
    env = {k: v for k, v in os.environ.items() if k not in UNSET}
    env["DISCERN_VAR_DIR"] = str(folder / "var")
    with httpx.Client(follow_redirects=False, timeout=10) as client:
        _login(client, base, "researcher")
        study = client.get(f"{base}/studies/1/")
        banner = re.search(r'<aside class="flash" id="demo-banner">(.*?)</aside>', study.text, re.S)
        assert banner, "the demo study's page shows its banner"
        command = re.search(r"<code>(.*?)</code>", banner.group(1)).group(1)
    assert command.startswith(".venv/bin/python manage.py judge_audit")
    done = subprocess.run(
        [*command.split(), "--json", str(folder / "audit.json")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    card = json.loads((folder / "audit.json").read_text())["cards"][0]["card"]
    verdicts = {
        (row[0], row[2]): row[3]
        for section in card["sections"]
        for table in section["tables"]
        if table["name"] == "verdict"
        for row in table["rows"]
    }
    decided = {k: v for k, v in verdicts.items() if v not in UNDECIDED}
    # BLEU scores each perturbed text against its original: its misses and D per kind are told
    told = {key for key, scope in decided if scope == "all kinds"}
    assert {"detection_failure", "D_min", "D_avg"} <= told, verdicts
