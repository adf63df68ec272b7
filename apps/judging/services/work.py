"""Judge runs from the worker's side: plan once, fan out, work, finish, fail, recover."""

from __future__ import annotations

import math
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.db.models.functions import Now
from django.utils import timezone

from apps.endpoints.slots import node_slots_release
from apps.judging import claims
from apps.judging.engine import run_work
from apps.judging.engine.once import requests_recover
from apps.judging.models import JudgeCall, JudgeRun, RunStatus
from apps.judging.planning import batched, plan_for

TASKS_PER_RUN = 2  # fan-out of one run over worker processes, when limits are shared (Redis)
CALLS_PER_TASK = 200  # below this many pending calls per task, one task is enough

# -- runs: the worker's side -------------------------------------------------------------------


def task_shares(run: JudgeRun) -> list[int]:
    """How the judge's concurrency is split over worker tasks (one task without Redis: only
    a Redis semaphore can keep several processes under the judge's limit together)."""
    limit = run.judge.max_concurrency
    if run.judge.is_metric or not getattr(settings, "REDIS_URL", ""):
        return [limit]
    pending = claims.pending_count(run.pk)
    tasks = max(1, min(TASKS_PER_RUN, limit, math.ceil(pending / CALLS_PER_TASK)))
    return [limit // tasks + (1 if i < limit % tasks else 0) for i in range(tasks)]


def _dispatch(run: JudgeRun) -> None:
    """Queue the worker tasks of a running run once the transaction commits (a batch-mode
    run's next step: apps.judging.services.batches)."""
    from workers.tasks.judging import queue_batch_step, queue_run_work

    if run.batch_mode:
        transaction.on_commit(lambda: queue_batch_step(run.pk))
        return
    metric = run.judge.is_metric
    if not run.planned:
        transaction.on_commit(lambda: queue_run_work(run.pk, metric=metric))
        return
    for share in task_shares(run):
        transaction.on_commit(
            lambda share=share: queue_run_work(run.pk, share, metric=metric)  # type: ignore[misc]
        )


@transaction.atomic
def judge_run_plan(*, run_id: int) -> JudgeRun:
    """List the run's calls once (idempotent: call identities are unique per run)."""
    run = JudgeRun.objects.select_for_update().get(pk=run_id)
    if run.planned:
        return run
    plan = plan_for(run)
    for batch in batched(plan.calls()):
        JudgeCall.objects.bulk_create(batch, ignore_conflicts=True)
    run.total = JudgeCall.objects.filter(run=run).count()
    run.problems = [{"reason": r, "count": n} for r, n in sorted(plan.left_out.items())]
    run.planned = True
    fields = ["total", "problems", "planned"]
    if run.total == 0:
        run.status, run.finished_at = RunStatus.FAILED, timezone.now()
        run.error = "nothing to judge: the selection has no texts (or no criteria)"
        fields += ["status", "finished_at", "error"]
    run.save(update_fields=fields)
    return run


def judge_run_fan_out(*, run_id: int) -> int | None:
    """The first task's start: plan the run, queue the other tasks; this task's share of the
    judge's concurrency (None: the run is not running)."""
    run = JudgeRun.objects.select_related("judge").filter(pk=run_id).first()
    if run is None or run.status != RunStatus.RUNNING:
        return None
    run = judge_run_plan(run_id=run_id)
    if run.status != RunStatus.RUNNING:
        return None
    shares = task_shares(run)
    from workers.tasks.judging import queue_run_work

    for extra in shares[1:]:
        queue_run_work(run.pk, extra, metric=run.judge.is_metric)
    return shares[0]


def judge_run_work(*, run_id: int, share: int | None = None, node: str = "") -> None:
    """The worker task's body: work, finish (``share`` None: the run's first task, which plans
    and fans out first: ``judge_run_fan_out``). The task tries it again after an outage with
    the same share, so the run's tasks never hold more than the judge's concurrency."""
    if share is None and (share := judge_run_fan_out(run_id=run_id)) is None:
        return
    runs = JudgeRun.objects.select_related("judge__endpoint", "strategy")
    run = runs.filter(pk=run_id).first()
    if run is None or run.status != RunStatus.RUNNING:
        return
    JudgeRun.objects.filter(pk=run_id, started_at__isnull=True).update(started_at=Now())
    run_work(run, token=claims.new_token(node), share=share, node=node)
    claims.run_finish_if_complete(run_id)


def judge_run_fail(*, run_id: int, error: str) -> None:
    """A worker gave up on the run (not on a call: failed calls do not fail a run)."""
    JudgeRun.objects.filter(pk=run_id, status=RunStatus.RUNNING).update(
        status=RunStatus.FAILED, error=error[:5000], finished_at=Now()
    )


def judge_runs_recover(*, node: str = "") -> list[int]:
    """Restart running runs whose workers died: those whose leases ``node``'s previous
    incarnation held (a restarted worker is certain they are dead: the attempts it sent and
    never saved are counted now), and those with no sign of life for two lease times (their
    tasks died, or their queued messages were lost with the broker). Returns the runs
    restarted."""
    run_ids: set[int] = set()
    if node:
        run_ids |= set(claims.node_claims_release(node=node))
        if getattr(settings, "REDIS_URL", ""):
            node_slots_release(settings.REDIS_URL, node)
            requests_recover(settings.REDIS_URL, node)
    stale = timezone.now() - timedelta(seconds=2 * claims.LEASE_SECONDS)
    quiet = JudgeRun.objects.filter(status=RunStatus.RUNNING, batch_mode=False).filter(
        Q(heartbeat_at__lt=stale) | Q(heartbeat_at__isnull=True, created_at__lt=stale)
    )
    run_ids |= set(quiet.values_list("id", flat=True))
    restarted = []
    own = JudgeRun.objects.filter(pk__in=run_ids, status=RunStatus.RUNNING)
    for run in own.filter(search_judge__isnull=True):  # a search works its runs itself
        with transaction.atomic():
            JudgeRun.objects.filter(pk=run.pk).update(heartbeat_at=Now())
            _dispatch(run)
        restarted.append(run.pk)
    return restarted
