"""The README's data commands, exactly as written, on the embedded default (no DATABASE_URL,
no DJANGO_DEBUG, no DJANGO_SECRET_KEY): the key is made and kept under var/, `migrate` loads
the shipped catalog, and `export_items ... | head` (any command whose reader goes away) ends
without a traceback. A deployment with
DATABASE_URL still refuses to start without a secret key."""

import os
import stat
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PY = str(ROOT / ".venv" / "bin" / "python")
UNSET = (
    "DATABASE_URL",
    "REDIS_URL",
    "DJANGO_SECRET_KEY",
    "DJANGO_DEBUG",
    "DISCERN_LOAD_CATALOG",
    "DJANGO_SETTINGS_MODULE",
)


@pytest.fixture
def embedded(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in UNSET}
    env["DISCERN_VAR_DIR"] = str(tmp_path / "var")

    def run(command: str, **extra: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            ["bash", "-c", command],
            cwd=ROOT,
            env=env | extra,
            capture_output=True,
            text=True,
            timeout=120,
        )

    return run, tmp_path


def test_readme_data_commands_work_as_written(embedded):
    run, tmp = embedded
    migrated = run(".venv/bin/python manage.py migrate")
    assert migrated.returncode == 0, migrated.stderr
    assert "Shipped catalog loaded" in migrated.stdout
    key = tmp / "var" / "secret_key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    first = key.read_text()
    again = run(".venv/bin/python manage.py migrate -v0")  # idempotent, same key
    assert again.returncode == 0, again.stderr and key.read_text() == first
    demo = run(".venv/bin/python manage.py load_demo")
    assert demo.returncode == 0, demo.stderr
    rows = "\n".join(f"x{n},Text number {n} of a longer file." for n in range(4000))
    (tmp / "news.csv").write_text("id,original\n" + rows + "\n", encoding="utf-8")
    imported = run(
        f".venv/bin/python manage.py import_items {tmp / 'news.csv'} --dataset News "
        "--task summarization --owner researcher"
    )
    assert imported.returncode == 0, imported.stderr
    assert "4000 items" in imported.stdout and "Owner: researcher" in imported.stdout
    head = run(".venv/bin/python manage.py export_items --dataset News | head -n 2")
    assert head.returncode == 0 and len(head.stdout.splitlines()) == 2
    assert "Traceback" not in head.stderr and "Exception" not in head.stderr, head.stderr


def test_a_command_whose_reader_goes_away_ends_without_a_traceback(embedded):
    run, _ = embedded
    ended = run(".venv/bin/python manage.py help | true")
    assert "Traceback" not in ended.stderr and "BrokenPipeError" not in ended.stderr, ended.stderr


def test_a_deployment_with_a_database_url_needs_a_secret_key(embedded):
    run, tmp = embedded
    refused = run(
        ".venv/bin/python manage.py check",
        DATABASE_URL="postgres://nobody:nothing@127.0.0.1:1/none",
    )
    assert refused.returncode != 0
    assert "DJANGO_SECRET_KEY is not set" in refused.stderr
    assert not (tmp / "var" / "secret_key").exists()
