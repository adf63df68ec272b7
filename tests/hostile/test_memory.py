"""TSV bombs: 400 KB files shaped to blow up a reader. Each import runs in a process of its
own (the code the upload page runs) and its peak memory (VmHWM) must stay under 300 MB."""

import os
import subprocess
import sys

import pytest
from django.db import connection

from tests.conftest import ROOT

pytestmark = pytest.mark.django_db(transaction=True)
LIMIT_MB = 300
SIZE = 400_000


def _fill(head: str, row: str) -> str:
    return head + row * ((SIZE - len(head)) // len(row))


BOMBS = {
    "open-quote": "id\toriginal\n1\t" + '"' * (SIZE + 1) + "\n",
    "quote-every-row": "id\toriginal\n" + "".join(f'{i}\t"x\n' for i in range(SIZE // 10)),
    "wide-header": "id\toriginal\t"
    + "\t".join(f"c{i}" for i in range(SIZE // 8))
    + "\n"
    + "a\tb\n" * 1000,
    "wide-row": "id\toriginal\n1\tx" + "\t" * SIZE + "\n",
    "many-rows-unknown-task": "id\toriginal\ttask\n"
    + "".join(f"{i}\tx\tnope\n" for i in range(SIZE // 12)),
    "one-item-many-perturbations": _fill("id\toriginal\tkind\tperturbed\n", "a\tx\tno\ty\n"),
    "nested-metadata": _fill("id\toriginal\tmetadata\n", "a\tx\t" + "[" * 40 + "]" * 40 + "\n"),
}

PROBE = """
import os, sys
import django
django.setup()
from django.core.management import call_command
from django.core.management.base import CommandError
try:
    call_command("import_items", sys.argv[1], "--dataset", "bomb", "--owner", sys.argv[2])
except CommandError as exc:
    print("refused:", str(exc)[:300], file=sys.stderr)
# VmHWM is this process's own peak: ru_maxrss would also count what the (large) test process
# held when it started this one, since Linux carries it across fork and exec.
with open("/proc/self/status") as status:
    print(next(int(line.split()[1]) for line in status if line.startswith("VmHWM")) // 1024)
"""


@pytest.mark.parametrize("shape", BOMBS)
def test_a_tsv_bomb_stays_under_300_mb(shape, catalog, researcher, tmp_path):
    path = tmp_path / f"{shape}.tsv"
    path.write_text(BOMBS[shape])
    db = connection.settings_dict
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": f"postgres://{db['USER']}:{db['PASSWORD']}@{db['HOST']}:{db['PORT']}/"
        f"{db['NAME']}",
    }
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(path), researcher.username],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "refused:" in done.stderr, "each bomb is refused with a reason"
    assert "Traceback" not in done.stderr
    peak_mb = int(done.stdout.strip().splitlines()[-1])
    print(f"{shape}: {peak_mb} MB")
    assert peak_mb < LIMIT_MB, f"{shape}: {peak_mb} MB"
