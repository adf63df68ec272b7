"""Reports on demand: served from a snapshot while their inputs are unchanged, rebuilt when
they change; big judge runs are built by the worker."""

from __future__ import annotations

import hashlib
import json
import logging
import math
import time
from collections.abc import Mapping

from django.db import transaction
from django.db.models import Count, Max

from apps.analysis.models import HumanRating, ReportSnapshot
from apps.analysis.reports import RUN_REPORTS, STUDY_REPORTS
from apps.analysis.reports.base import Report
from apps.analysis.reports.meanings import with_meanings
from apps.analysis.reports.sections import section_names
from apps.annotation.models import Study, judgement_types
from apps.annotation.selectors.panel import screened_out_people
from apps.judging.models import JudgeCall, JudgeRun, SearchItem

logger = logging.getLogger(__name__)

#: Runs with more scored calls than this are built in the worker, with a progress page.
BACKGROUND_CALLS = 50_000
#: Part of every fingerprint: raise it when what the reports compute changes, so snapshots
#: built by the previous code are rebuilt. A kind of work's sections need no raise: their names
#: are part of the fingerprint too (`section_names`), so adding or removing a kind rebuilds.
REPORT_FORMAT = 5


def inputs_fingerprint(study: Study, run: JudgeRun | None = None) -> str:
    """Changes whenever anything a report of this study (and run) reads changes."""
    parts: list[object] = [REPORT_FORMAT, section_names()]
    for model in judgement_types():  # every type of human work (docs/annotation.md)
        agg = model._default_manager.filter(study=study).aggregate(
            n=Count("id"), last=Max("updated_at")
        )
        parts += [agg["n"], str(agg["last"])]
    # Control items' answers, and the threshold (it may leave annotators out).
    for model in judgement_types():
        agg = model.answers.filter(study=study, control__isnull=False).aggregate(
            n=Count("id"), last=Max("updated_at")
        )
        parts += [agg["n"], str(agg["last"])]
    parts += [study.control_threshold, study.control_exclude]
    parts.append(sorted(screened_out_people(study)))  # recruited participants left out
    parts.append(HumanRating.objects.filter(item__dataset__studies=study).count())
    runs = JudgeRun.objects.filter(pk=run.pk) if run else JudgeRun.objects.filter(study=study)
    calls = JudgeCall.objects.filter(run__in=runs).aggregate(
        n=Count("id"), last=Max("finished_at"), scored=Count("score")
    )
    parts += [calls["n"], calls["scored"], str(calls["last"])]
    searched = SearchItem.objects.filter(search__study=study).aggregate(
        n=Count("id"), last=Max("updated_at")
    )
    parts += [searched["n"], str(searched["last"])]
    return hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()


def report_get(*, study: Study, name: str, run: JudgeRun | None = None) -> ReportSnapshot:
    """The report's snapshot: current, being built by the worker, or built now."""
    fingerprint = inputs_fingerprint(study, run)
    snapshot = ReportSnapshot.objects.filter(study=study, name=name, run=run).first()
    if snapshot and snapshot.fingerprint == fingerprint and snapshot.status != "failed":
        return snapshot
    snapshot = _claim(study, name, run, fingerprint)
    if run is not None and run.done > BACKGROUND_CALLS:
        from workers.tasks.reports import build_report

        transaction.on_commit(lambda: build_report.delay(snapshot.pk))
        return snapshot
    report_build(snapshot_id=snapshot.pk)
    snapshot.refresh_from_db()
    return snapshot


def _claim(study, name, run, fingerprint) -> ReportSnapshot:
    snapshot, _ = ReportSnapshot.objects.update_or_create(
        study=study,
        name=name,
        run=run,
        defaults={
            "fingerprint": fingerprint,
            "status": ReportSnapshot.Status.BUILDING,
            "error": "",
        },
    )
    return snapshot


def report_build(*, snapshot_id: int) -> None:
    """Build one snapshot's report and store it (idempotent: a rebuild overwrites).

    A report that cannot be built is stored as failed with its reason, which the page, the
    downloads and the API show; the traceback goes to the log, never to the user."""
    snapshot = ReportSnapshot.objects.select_related(
        "study", "run__judge", "run__strategy", "run__study"
    ).get(pk=snapshot_id)
    started = time.perf_counter()
    try:
        report = _build(snapshot)
    except Exception as exc:  # a report failure is shown on the page, not a 500
        logger.exception("report %s of study %s failed", snapshot.name, snapshot.study_id)
        ReportSnapshot.objects.filter(pk=snapshot_id).update(
            status=ReportSnapshot.Status.FAILED, error=f"{type(exc).__name__}: {exc}"
        )
        return
    ReportSnapshot.objects.filter(pk=snapshot_id).update(
        status=ReportSnapshot.Status.DONE,
        payload=report.as_dict(),
        seconds=round(time.perf_counter() - started, 3),
    )


def _build(snapshot: ReportSnapshot) -> Report:
    if snapshot.run is not None:
        return with_meanings(RUN_REPORTS[snapshot.name](snapshot.run))
    return with_meanings(STUDY_REPORTS[snapshot.name](snapshot.study))


class ThresholdError(ValueError):
    def __init__(self, errors: dict[str, str]) -> None:
        super().__init__("; ".join(f"{k}: {v}" for k, v in errors.items()))
        self.errors = errors


@transaction.atomic
def verdict_thresholds_save(*, study: Study, values: Mapping[str, str | float | None]) -> None:
    """Set the study's verdict thresholds (figure key → value; blank: the default). Checks
    every value first and saves all or nothing; a share's threshold lies in [0, 1]."""
    from apps.analysis.definitions import DEFINITIONS
    from apps.analysis.models import VerdictThreshold

    chosen: dict[str, float | None] = {}
    errors: dict[str, str] = {}
    for key, raw in values.items():
        definition = DEFINITIONS.get(key)
        if definition is None or definition.threshold is None:
            errors[key] = "no such figure with a verdict"
            continue
        if raw in (None, ""):
            chosen[key] = None
            continue
        try:
            value = float(raw)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            errors[key] = "a number, please"
            continue
        if not math.isfinite(value) or (
            definition.unit.startswith("share") and not 0 <= value <= 1
        ):
            errors[key] = "a share's threshold lies between 0 and 1"
            continue
        chosen[key] = None if value == definition.threshold else value
    if errors:
        raise ThresholdError(errors)
    for key, own in chosen.items():
        if own is None:
            VerdictThreshold.objects.filter(study=study, figure=key).delete()
        else:
            VerdictThreshold.objects.update_or_create(
                study=study, figure=key, defaults={"value": own}
            )
