"""Batch mode on a real Celery worker: the run is submitted as one batch, the worker is
killed between submit and fetch, and a restarted worker fetches the results: the run
finishes with every call answered and no batch submitted twice."""

from __future__ import annotations

import os
import signal
import time

import pytest
from django.utils import timezone

from apps.judging.models import BatchStatus, CallBatch, JudgeCall, JudgeRun
from apps.judging.services.run_start import judge_run_confirm
from tests.judging.conftest import llm_judge, strategy
from tests.judging.test_worker import finished, own_worker, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_a_worker_killed_between_submit_and_fetch_submits_nothing_twice(
    demo, criteria, fake_openai_server, own_queue
):
    from apps.judging.services.runs import judge_run_create

    queue, node = own_queue
    judge = llm_judge(fake_openai_server, batch_api=True)
    fake_openai_server.batches.hold = True  # in progress until released
    env = {"DISCERN_BATCH_POLL_S": "0.5", "DISCERN_BATCH_POLL_MAX_S": "1"}
    with own_worker(queue, node, "batch-worker-killed.log", env=env) as first:
        run = judge_run_create(
            user=demo.owner,
            judge=judge,
            strategy=strategy("fbi-single-vanilla"),
            study=demo,
            criteria=criteria("overall"),
            vetted_only=False,
            start=False,
        )
        judge_run_confirm(run=run, confirmed=True, batch=True)
        submitted = CallBatch.objects.filter(run=run, status=BatchStatus.SUBMITTED)
        wait_for(submitted.exists, what="the batch to be submitted")
        wait_for(lambda: submitted.first().polls >= 2, what="the worker to look at it again")
        os.killpg(first.pid, signal.SIGKILL)  # the whole worker, between submit and fetch
        first.wait(10)
    fake_openai_server.batches.release()
    batch = submitted.get()
    run.refresh_from_db()
    assert run.status == "running" and run.done == 0 and batch.lines == 20
    late = batch.next_look_in + 5.5  # the dead worker's next look is lost: overdue for a sweep
    time.sleep(max(0.0, late))
    with own_worker(queue, node, "batch-worker-restarted.log", env=env):
        wait_for(finished(run.pk), timeout=90, what="the run to finish after the restart")
    run.refresh_from_db()
    assert (run.status, run.total, run.done, run.failed) == ("done", 20, 20, 0), run.error
    assert fake_openai_server.batches.created == 1  # nothing submitted twice
    assert fake_openai_server.batches.lines_answered == 20  # one line per prompt, once
    chat = [r for r in fake_openai_server.requests if r.path.endswith("/chat/completions")]
    assert not chat  # nothing asked live
    assert run.http_requests == 20
    assert JudgeCall.objects.filter(run=run, parse_status="parsed").count() == 20
    assert CallBatch.objects.get(pk=batch.pk).finished_at <= timezone.now()
    assert JudgeRun.objects.get(pk=run.pk).estimated_cost is None  # no prices set
