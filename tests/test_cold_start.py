"""Start-up cost: a management command (``django.setup()`` and the URL conf, as ``check`` loads
them) imports none of the slow libraries; the web server and the worker import them at start,
so no request or task pays for them (docs/deployment.md, Start-up)."""

import json
import subprocess
import sys

from tests.conftest import ROOT

#: Each costs 0.1-0.8 s to import; they are imported where they are used.
HEAVY = (
    "scipy",
    "numpy",
    "pandas",
    "openai",
    "nltk",
    "sacrebleu",
    "rouge_score",
    "matplotlib",
    "textblob",
)

PROBE = """
import json, os, sys
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
import django
django.setup()
{load}
print(json.dumps(sorted({{name.split(".")[0] for name in sys.modules}})))
"""
URL_CONF = """
from django.core.checks.urls import check_url_config
from django.urls import get_resolver
get_resolver().url_patterns
assert not check_url_config(None)
"""
WEB_SERVER = "import config.wsgi"
WORKER = "from workers.celery import tune_process; tune_process()"


def _imported(load: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(load=load)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def test_a_management_command_imports_no_slow_library() -> None:
    slow = sorted(set(HEAVY) & _imported(URL_CONF))
    assert not slow, f"imported by django.setup() and the URL conf: {slow} (import them where used)"


def test_the_web_server_and_the_worker_import_them_at_start() -> None:
    for load in (WEB_SERVER, WORKER):
        imported = _imported(load)
        for module in ("scipy", "numpy", "openai", "matplotlib", "sacrebleu", "textblob"):
            assert module in imported, (load, module)
