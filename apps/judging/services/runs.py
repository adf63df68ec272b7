"""Judge runs from the researcher's side: create, start, cancel, resume, run again."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import timedelta
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models.functions import Now
from django.utils import timezone

from apps.annotation.selectors import studies_for_user
from apps.catalog.models import Criterion, Metric, PerturbationKind
from apps.corpus.models import Dataset
from apps.corpus.selectors import datasets_for_user
from apps.judging import claims, selectors
from apps.judging.models import Judge, JudgeRun, RunStatus, Strategy
from apps.judging.services.work import _dispatch

# -- runs: creating, starting, stopping --------------------------------------------------------


def _run_problems(
    judge: Judge,
    strategy: Strategy | None,
    study: Any,
    dataset: Dataset | None,
    criteria: Sequence[Criterion],
    metrics: Sequence[Metric],
) -> dict[str, str]:
    problems = {}
    if study is None and dataset is None:
        problems["dataset"] = "choose a study or a dataset"
    if (
        study is not None
        and dataset is not None
        and not study.datasets.filter(pk=dataset.pk).exists()
    ):
        problems["dataset"] = "this dataset is not part of the study"
    if judge.is_metric and strategy is not None:
        problems["strategy"] = "metric judges need no strategy"
    if not judge.is_metric:
        if strategy is None:
            problems["strategy"] = "an LLM judge needs a strategy"
        has_study_criteria = study is not None and study.criteria.exists()
        if not criteria and not metrics and not has_study_criteria:
            problems["criteria"] = "choose at least one criterion or task metric"
    return problems


def _access_problems(
    user: Any, judge: Judge, strategy: Strategy | None, study: Any, dataset: Dataset | None
) -> dict[str, str]:
    """What this user may not use, named as if it did not exist (ids reveal nothing).
    ``user`` None: a trusted caller (a benchmark, the shell)."""
    if user is None:
        return {}
    reachable = {
        "judge": (judge, selectors.judges_for_user(user)),
        "strategy": (strategy, selectors.strategies_for_user(user, latest=False)),
        "study": (study, studies_for_user(user)),
        "dataset": (dataset, datasets_for_user(user)),
    }
    return {
        name: "no such " + name
        for name, (chosen, allowed) in reachable.items()
        if chosen is not None and not allowed.filter(pk=chosen.pk).exists()
    }


@transaction.atomic
def judge_run_create(
    *,
    user: Any,
    judge: Judge,
    strategy: Strategy | None = None,
    study: Any = None,
    dataset: Dataset | None = None,
    criteria: Iterable[Criterion] = (),
    metrics: Iterable[Metric] = (),
    kinds: Iterable[PerturbationKind] = (),
    item_ids: Sequence[int] = (),
    perturbation_ids: Sequence[int] = (),
    include_originals: bool = True,
    include_perturbations: bool = True,
    vetted_only: bool = True,
    batch_mode: bool = False,
    batch_live_fallback: bool = False,
    label: str = "",
    start: bool = True,
) -> JudgeRun:
    """Record a run (selection checked) and, unless ``start`` is False, start it;
    ``batch_mode``: through the judge's batch interface (apps.judging.services.batches)."""
    criteria, metrics = list(criteria), list(metrics)
    problems = _access_problems(user, judge, strategy, study, dataset)
    problems = problems or _run_problems(judge, strategy, study, dataset, criteria, metrics)
    if not problems and batch_mode and (why := judge.batch_problem(strategy)):
        problems = {"batch_mode": f"not as a batch: {why}"}
    if problems:
        raise ValidationError(problems)
    run = JudgeRun.objects.create(
        judge=judge,
        strategy=strategy,
        study=study,
        dataset=dataset,
        label=label,
        item_ids=[int(i) for i in item_ids],
        perturbation_ids=[int(i) for i in perturbation_ids],
        include_originals=include_originals,
        include_perturbations=include_perturbations,
        vetted_only=vetted_only,
        batch_mode=batch_mode,
        batch_live_fallback=batch_mode and batch_live_fallback,
        created_by=user,
    )
    run.criteria.set(criteria)
    run.metrics.set(metrics)
    run.kinds.set(list(kinds))
    return judge_run_start(run=run) if start else run


def part_of_search(run: JudgeRun) -> bool:
    """A search's judge run is started, stopped and resumed with its search only."""
    return JudgeRun.objects.filter(pk=run.pk, search_judge__isnull=False).exists()


@transaction.atomic
def judge_run_start(*, run: JudgeRun) -> JudgeRun:
    if part_of_search(run):
        return run
    JudgeRun.objects.filter(pk=run.pk).update(
        status=RunStatus.RUNNING, heartbeat_at=Now(), finished_at=None, error=""
    )
    run.refresh_from_db()
    _dispatch(run)
    return run


@transaction.atomic
def judge_run_cancel(*, run: JudgeRun) -> JudgeRun:
    """Stop a run: workers stop within a second; calls not made stay pending for a resume."""
    if part_of_search(run):
        return run
    JudgeRun.objects.filter(pk=run.pk, status__in=[RunStatus.PENDING, RunStatus.RUNNING]).update(
        status=RunStatus.CANCELLED, finished_at=Now()
    )
    run.refresh_from_db()
    return run


def _alive(run: JudgeRun) -> bool:
    fresh = timezone.now() - timedelta(seconds=2 * claims.LEASE_SECONDS)
    return run.status == RunStatus.RUNNING and bool(run.heartbeat_at and run.heartbeat_at > fresh)


@transaction.atomic
def judge_run_resume(*, run: JudgeRun, retry_failed: bool = False) -> JudgeRun:
    """Continue a cancelled, failed or stalled run; ``retry_failed`` asks failed calls again
    (their errors are kept in ``previous_errors``). A run already making progress is left
    alone. A done run with nothing to retry stays done."""
    run.refresh_from_db()
    if part_of_search(run) or (_alive(run) and not retry_failed):
        return run
    if retry_failed:
        claims.failed_calls_reset(run_id=run.pk)
    if run.status == RunStatus.DONE and not claims.pending_count(run.pk):
        return run
    return judge_run_start(run=run)


@transaction.atomic
def judge_run_rerun(
    *, run: JudgeRun, user: Any, start: bool = True, vetted_only: bool | None = None
) -> JudgeRun:
    """The same judge, strategy version and selection again: a finished run's replies all
    come from the cache, so no HTTP request is made (``start`` False: recorded only;
    ``vetted_only`` given: that choice instead of the run's)."""
    return judge_run_create(
        start=start,
        user=user,
        judge=run.judge,
        strategy=run.strategy,
        study=run.study,
        dataset=run.dataset,
        criteria=run.criteria.all(),
        metrics=run.metrics.all(),
        kinds=run.kinds.all(),
        item_ids=run.item_ids,
        perturbation_ids=run.perturbation_ids,
        include_originals=run.include_originals,
        include_perturbations=run.include_perturbations,
        vetted_only=run.vetted_only if vetted_only is None else vetted_only,
        label=f"{run.label or f'run {run.pk}'} (again)",
    )
