"""Time the import of the FBI folder (2,492 perturbations) on SQLite and on PostgreSQL.

Each database is fresh: migrated, catalog loaded, then the import is timed (first run), and a
second import of the same folder is timed too (it must add nothing). The folder is fbi/data of
the published peer data ($DISCERN_PEERS_DIR, or ../shared/peers beside the checkout). Run:

    .venv/bin/python bench/import.py [--postgres postgres://discern:discern@127.0.0.1/discern_bench]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the published peer data, as bench/perturb.py finds it
FBI = Path(os.environ.get("DISCERN_PEERS_DIR", ROOT.parent / "shared" / "peers")) / "fbi" / "data"


def run_one() -> None:
    """In a child process whose DATABASE_URL names an empty database."""
    import django

    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from apps.catalog.loading import catalog_load
    from apps.corpus.importing import items_import

    call_command("migrate", verbosity=0)
    catalog_load()
    started = time.perf_counter()
    first = items_import(path=FBI, dataset_name="FBI", file_format="fbi")
    first_s = time.perf_counter() - started
    started = time.perf_counter()
    second = items_import(path=FBI, dataset_name="FBI", file_format="fbi")
    second_s = time.perf_counter() - started
    print(
        json.dumps(
            {
                "vendor": connection.vendor,
                "first_s": first_s,
                "second_s": second_s,
                "created": first.perturbations_created,
                "second_created": second.perturbations_created,
            }
        )
    )


def child(database_url: str) -> dict:
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "DJANGO_DEBUG": "true",
        "DJANGO_LOG_LEVEL": "WARNING",
    }
    out = subprocess.run(
        [sys.executable, __file__, "--child"],
        env=env,
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def recreate_postgres(url: str) -> None:
    import psycopg

    base, name = url.rsplit("/", 1)
    with psycopg.connect(f"{base}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--child", action="store_true")
    parser.add_argument(
        "--postgres", default="postgres://discern:discern@127.0.0.1:5432/discern_bench"
    )
    args = parser.parse_args()
    if args.child:
        run_one()
        return
    results = []
    with tempfile.TemporaryDirectory() as folder:
        results.append(child(f"sqlite:///{folder}/bench.sqlite3"))
    recreate_postgres(args.postgres)
    results.append(child(args.postgres))
    print(f"FBI folder: {FBI}")
    print(
        f"{'database':<12}{'perturbations':>15}{'first import':>15}{'re-import':>12}"
        f"{'added again':>13}"
    )
    for r in results:
        print(
            f"{r['vendor']:<12}{r['created']:>15,}{r['first_s']:>14.2f}s{r['second_s']:>11.2f}s"
            f"{r['second_created']:>13}"
        )
    print("target: first import under 5 s on each database")


if __name__ == "__main__":
    main()
