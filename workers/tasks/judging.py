"""Judge run tasks: ids in, one service call.

``work_run`` works on a run until nothing is left to claim (see apps.judging.engine); it is
safe to run twice or at once on several workers. Database, Redis and broker outages are waited
out in the task (workers.outages); anything else fails the run with the error shown on its
page. A worker that starts frees the leases its previous incarnation held (it was killed) and
restarts those runs; every worker looks for runs nobody works on (workers.recovery).
"""

from __future__ import annotations

from typing import Any

from celery import current_app, shared_task
from celery.signals import worker_ready

from apps.judging import claims
from apps.judging.services import (
    judge_run_fail,
    judge_run_fan_out,
    judge_run_work,
    judge_runs_recover,
)
from apps.judging.services.batches import batch_runs_recover, judge_run_batch_step
from workers.outages import TRANSIENT, through_outages


@shared_task(name="judging.work_run", bind=True, acks_late=True)
def work_run(self: Any, run_id: int, share: int | None = None) -> None:
    node = self.request.hostname or ""
    try:
        if share is None:  # the run's first task
            share = through_outages(judge_run_fan_out, run_id=run_id)
        if share is not None:
            through_outages(judge_run_work, run_id=run_id, share=share, node=node)
    except TRANSIENT as exc:
        judge_run_fail(run_id=run_id, error=f"a service stayed out of reach: {exc}")
        raise
    except Exception as exc:
        judge_run_fail(run_id=run_id, error=f"{type(exc).__name__}: {exc}")
        raise


def metrics_queue() -> str:
    """Metric judges' runs have a queue (and a worker) of their own: they need no HTTP and
    must never wait behind LLM runs (docs/deployment.md)."""
    return f"{current_app.conf.task_default_queue}-metrics"


def queue_run_work(run_id: int, share: int | None = None, *, metric: bool = False) -> None:
    """Queue ``work_run`` for a run: on the metrics queue for a metric judge."""
    work_run.apply_async((run_id, share), queue=metrics_queue() if metric else None)


@shared_task(name="judging.batch_step", bind=True, acks_late=True)
def batch_step(self: Any, run_id: int) -> None:
    """One step of a batch-mode run; the next is queued for when the batch is to be looked at
    again (lost, it is queued again by ``recover_runs``)."""
    node = self.request.hostname or ""
    try:
        delay = through_outages(judge_run_batch_step, run_id=run_id, node=node)
    except TRANSIENT as exc:
        judge_run_fail(run_id=run_id, error=f"a service stayed out of reach: {exc}")
        raise
    except Exception as exc:
        judge_run_fail(run_id=run_id, error=f"{type(exc).__name__}: {exc}")
        raise
    if delay is not None:
        batch_step.apply_async((run_id,), countdown=delay)


def queue_batch_step(run_id: int) -> None:
    batch_step.delay(run_id)


@shared_task(name="judging.recover_runs")
def recover_runs(node: str = "") -> list[int]:
    overdue = batch_runs_recover()
    for run_id in overdue:
        queue_batch_step(run_id)
    return sorted([*judge_runs_recover(node=node), *overdue])


@worker_ready.connect
def recover_after_start(sender: Any = None, **_: Any) -> None:
    node = getattr(sender, "hostname", "") or ""
    recover_runs.delay(node)  # this node's previous incarnation is dead: free its leases now
    recover_runs.apply_async(countdown=2 * claims.LEASE_SECONDS + 1)  # other dead workers
