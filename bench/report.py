"""Report build times at the papers' scale, on PostgreSQL.

1. judge reliability: 1,000 items x 18 kinds x 11 criteria x 5 samples (plus the originals:
   1,045,000 scored calls) -> the full judge-reliability report, built in a fresh process;
   prints seconds and that process's peak memory (target: under 20 s and 2 GB).
2. human agreement: 23,040 pairwise annotations (40 annotators in 4 groups, 18 kinds x 4
   samples, 80 criteria; Hu et al.'s design) -> the agreement report (target: under 3 s).

    .venv/bin/python bench/report.py [--postgres postgres://discern:discern@127.0.0.1/discern_bench_report]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def setup_django() -> None:
    import django

    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()


def populate(items: int, samples: int) -> dict:
    """Fresh database: catalog, a study, items, perturbations, a run and its calls (COPY)."""
    import numpy as np
    from django.core.management import call_command
    from django.db import connection

    from apps.accounts.models import User
    from apps.annotation.models import Study
    from apps.catalog.criteria_import import criteria_import
    from apps.catalog.loading import catalog_load
    from apps.catalog.models import Criterion, PerturbationKind, Task
    from apps.corpus.models import Dataset, Perturbation, SourceItem
    from apps.judging.models import Judge, JudgeCall, JudgeRun

    call_command("migrate", verbosity=0)
    catalog_load()
    from django.conf import settings

    hu = Path(settings.DISCERN_PEERS_DIR) / "hu2024" / "aspect_criteria.json"
    criteria_import(path=hu, source="hu2024")
    owner = User.objects.create(username="bench", role="researcher")
    study = Study.objects.create(slug="bench", name="bench", owner=owner)
    dataset = Dataset.objects.create(name="bench")
    study.datasets.add(dataset)
    task = Task.objects.get(slug="summarization")
    kinds = list(PerturbationKind.objects.filter(family="aspect-targeted").order_by("slug"))
    study.kinds.set(kinds)
    criteria = list(Criterion.objects.filter(source="discern", description_type="default"))
    rows = SourceItem.objects.bulk_create(
        SourceItem(dataset=dataset, external_id=f"b{n}", task=task, original=f"text {n}")
        for n in range(items)
    )
    perts = Perturbation.objects.bulk_create(
        Perturbation(
            item=item, kind=kind, external_id=f"{item.pk}-{kind.pk}", text="p", origin="import"
        )
        for item in rows
        for kind in kinds
    )
    judge = Judge.objects.create(name="bench judge", kind="metric", metric="bleu")
    run = JudgeRun.objects.create(judge=judge, study=study, dataset=dataset, status="done")
    template = JudgeCall(run=run, item=rows[0], request={}, parse_status="parsed", score=1.0)
    fields = [f for f in JudgeCall._meta.concrete_fields if not f.primary_key]
    base = {f.column: f.get_db_prep_save(getattr(template, f.attname), connection) for f in fields}
    base["created_at"] = base["finished_at"] = datetime.now(UTC)
    rng = np.random.default_rng(0)
    started = time.perf_counter()
    columns = [f.column for f in fields]
    texts = [(item.pk, None) for item in rows] + [(p.item_id, p.pk) for p in perts]
    n = 0
    with (
        connection.cursor() as cursor,
        cursor.connection.cursor().copy(
            f"COPY {JudgeCall._meta.db_table} ({', '.join(columns)}) FROM STDIN"
        ) as copy,
    ):
        for item, pert in texts:
            for criterion in criteria:
                for sample in range(samples):
                    values = dict(base)
                    values.update(
                        identity=f"i{item}.p{pert or 0}.c{criterion.pk}.s{sample}",
                        item_id=item,
                        perturbation_id=pert,
                        criterion_id=criterion.pk,
                        sample_index=sample,
                        score=float(rng.integers(1, 6)),
                    )
                    copy.write_row([_text(values[c]) for c in columns])
                    n += 1
    return {"run": run.pk, "calls": n, "load_s": time.perf_counter() - started}


def _text(value):
    if isinstance(value, dict | list):
        return json.dumps(value)
    return value


def build_reliability(run_id: int) -> None:
    from apps.analysis.reports import judge_reliability
    from apps.judging.models import JudgeRun

    run = JudgeRun.objects.select_related("judge", "strategy", "study").get(pk=run_id)
    started = time.perf_counter()
    report = judge_reliability.build(run)
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": seconds, "peak_mb": peak, "tables": len(report.tables())}))


def agreement(study_slug: str = "bench") -> dict:
    """23,040 comparisons on 72 perturbations (18 kinds x 4 samples) and 80 criteria."""
    from apps.accounts.models import User
    from apps.analysis.reports import human_agreement
    from apps.annotation.models import Comparison, Study
    from apps.catalog.models import Criterion
    from apps.corpus.models import Perturbation

    study = Study.objects.get(slug=study_slug)
    criteria = list(Criterion.objects.filter(source="hu2024"))
    pairs = []
    for kind_id in study.kinds.values_list("id", flat=True):
        pairs += list(Perturbation.objects.filter(kind_id=kind_id).order_by("id")[:4])
    people = User.objects.bulk_create(User(username=f"a{n}") for n in range(40))
    outcomes = ["worse", "same", "better", "uncertain"]
    choice = {"worse": "A", "same": "C", "better": "B", "uncertain": "D"}
    rows = []
    for g in range(4):
        group = people[g * 10 : (g + 1) * 10]
        for c, criterion in enumerate(criteria):
            person = group[c % 10]
            for p, pert in enumerate(pairs):
                outcome = outcomes[(p + c + g) % 7 % 4]
                rows.append(
                    Comparison(
                        study=study,
                        perturbation=pert,
                        criterion=criterion,
                        annotator=person,
                        group=g + 1,
                        original_first=True,
                        choice=choice[outcome],
                        outcome=outcome,
                    )
                )
    Comparison.objects.bulk_create(rows, batch_size=5000)
    started = time.perf_counter()
    human_agreement.build(study)
    return {"annotations": len(rows), "seconds": time.perf_counter() - started}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--postgres", default="postgres://discern:discern@127.0.0.1:5432/discern_bench_report"
    )
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--build", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    os.environ.update(DATABASE_URL=args.postgres, DJANGO_DEBUG="true", DJANGO_LOG_LEVEL="WARNING")
    if args.build:
        setup_django()
        build_reliability(args.build)
        return
    _recreate(args.postgres)
    setup_django()
    made = populate(args.items, args.samples)
    print(f"loaded {made['calls']:,} scored calls in {made['load_s']:.1f} s")
    out = subprocess.run(
        [sys.executable, __file__, "--postgres", args.postgres, "--build", str(made["run"])],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    built = json.loads(out.strip().splitlines()[-1])
    print(
        f"judge reliability report: {built['seconds']:.2f} s, peak memory of the building "
        f"process {built['peak_mb']:.0f} MB ({built['tables']} tables); "
        f"target under 20 s and 2,048 MB"
    )
    agreed = agreement()
    print(
        f"human agreement report over {agreed['annotations']:,} comparisons: "
        f"{agreed['seconds']:.2f} s; target under 3 s"
    )


def _recreate(url: str) -> None:
    import psycopg

    base, name = url.rsplit("/", 1)
    with psycopg.connect(f"{base}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')


if __name__ == "__main__":
    main()
