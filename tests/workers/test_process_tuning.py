"""Worker processes start tuned for judge runs (see ``workers.celery.tune_process``)."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROBE = """
import gc, json, sys
import django
django.setup()
from workers.celery import tune_process
before = gc.get_freeze_count()
tune_process()
print(json.dumps({"before": before, "frozen": gc.get_freeze_count(),
                  "switch": sys.getswitchinterval()}))
"""


def test_a_worker_process_freezes_its_startup_objects_and_switches_threads_often() -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout
    state = json.loads(out.strip().splitlines()[-1])
    assert state["before"] == 0
    assert state["frozen"] > 10_000  # Django and the SDKs: full collections skip them
    assert state["switch"] == 0.001
