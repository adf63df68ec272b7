"""Judge runs in real Celery workers against a hostile server: replies that drip, 429 storms,
cancels and kills. Each attempt ends at the judge's timeout, metric runs never wait behind
LLM runs, the HTTP-requests counter equals what the server received, and one distinct prompt
is asked once per run however the run is fanned out."""

from __future__ import annotations

import os
import signal
import time

import pytest

from apps.corpus.models import SourceItem
from apps.judging.models import Judge, JudgeCall, JudgeRun
from apps.judging.services import judge_run_cancel, judge_run_create, judge_run_resume
from tests.fakes.openai_server import Fault
from tests.judging.conftest import llm_judge, strategy
from tests.judging.test_worker import ALL_ASPECTS, finished, own_worker, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def model_is(name: str):
    return lambda request: (request.json or {}).get("model") == name


def start(demo, judge, slug: str, **selection) -> JudgeRun:
    return judge_run_create(
        user=demo.owner,
        judge=judge,
        strategy=strategy(slug),
        study=demo,
        vetted_only=False,  # every perturbation of the demo, vetted or not
        **selection,
    )


def test_dripping_replies_end_at_the_timeout_and_metric_runs_do_not_wait(
    celery_worker, demo, criteria, fake_openai_server
):
    """Two judges whose first call drips a byte every 0.5 s hold both worker processes; each
    such attempt ends at the judge's 2 s timeout and is retried up to the limit, and the runs
    finish. A BLEU run started meanwhile finishes at once, on the metrics worker."""
    item = SourceItem.objects.filter(dataset__name="Demo news summaries").order_by("id").first()
    runs = []
    for name in ("drip-a", "drip-b"):
        fake_openai_server.add_rule(model_is(name), Fault.drip(0.5), times=2)
        judge = llm_judge(
            fake_openai_server, model=name, max_concurrency=1, timeout_s=2.0, max_attempts=2
        )
        runs.append(
            start(
                demo, judge, "fbi-single-vanilla", criteria=criteria("overall"), item_ids=[item.pk]
            )
        )
    wait_for(lambda: fake_openai_server.in_flight == 2, what="both dripping replies")
    bleu = judge_run_create(user=demo.owner, judge=Judge.objects.get(name="BLEU"), study=demo)
    started = time.monotonic()
    wait_for(finished(bleu.pk), timeout=20, what="the BLEU run")
    assert time.monotonic() - started < 3.0  # it did not wait for the dripping calls
    assert not any(JudgeRun.objects.get(pk=run.pk).finished for run in runs)
    for run in runs:
        wait_for(finished(run.pk), timeout=60, what="the dripping run")
        run.refresh_from_db()
        assert run.status == "done" and run.failed == 1 and run.done == run.total - 1
        dripped = JudgeCall.objects.get(run=run, parse_status="error")
        assert dripped.error_kind == "timeout" and dripped.attempts == 2
        assert "no complete reply within the judge's timeout of 2 s" in dripped.error
        assert 1.0 <= dripped.latency <= 3.0  # the last attempt: the timeout, +- 1 s
        assert 3.0 <= dripped.total_seconds <= 7.0  # two attempts and a short backoff
        sent = [r for r in fake_openai_server.requests if model_is(run.judge.endpoint.model)(r)]
        assert run.http_requests == len(sent) == run.total + 1


def test_one_distinct_prompt_is_asked_once_however_the_run_is_fanned_out(
    celery_worker, demo, criteria, fake_openai_server
):
    """11 criteria x 20 texts: 220 calls over two tasks; every distinct prompt (cache key) is
    asked exactly once, and the counter says so."""
    fake_openai_server.latency = 0.05
    judge = llm_judge(fake_openai_server, max_concurrency=4)
    run = start(demo, judge, "fbi-single-axis", criteria=criteria(*ALL_ASPECTS))
    wait_for(finished(run.pk), what="the run")
    run.refresh_from_db()
    assert (run.status, run.total, run.done, run.failed) == ("done", 220, 220, 0)
    keys = set(JudgeCall.objects.filter(run=run).values_list("cache_key", flat=True))
    bodies = [request.body for request in fake_openai_server.requests]
    assert len(bodies) == len(set(bodies)) == len(keys) == run.http_requests
    assert run.cached == run.total - len(keys)


def test_the_request_counter_equals_what_the_server_received(
    demo, criteria, fake_openai_server, own_queue
):
    """After a 429 storm, "Retry failed calls", a cancel with requests abandoned on the wire
    and a kill -9 with requests on the wire, each run's HTTP-requests counter is what the
    server counted for it, and it never went down."""
    queue, node = own_queue
    seen: dict[int, int] = {}

    def judge(model: str) -> Judge:
        return llm_judge(
            fake_openai_server, model=model, max_concurrency=3, max_attempts=2, timeout_s=20.0
        )

    def counter(run: JudgeRun) -> int:
        value = JudgeRun.objects.get(pk=run.pk).http_requests
        assert value >= seen.get(run.pk, 0), "the HTTP-requests counter went down"
        seen[run.pk] = value
        return value

    def received(model: str) -> int:
        return sum(1 for r in fake_openai_server.requests if model_is(model)(r))

    def counted(run: JudgeRun, model: str):
        return lambda: counter(run) == received(model)

    overall = criteria("overall", "fluency")
    fake_openai_server.add_rule(model_is("storm"), Fault.rate_limit(retry_after="0.1"), times=40)
    fake_openai_server.add_rule(model_is("cancel"), Fault.hang(60.0), times=3)
    fake_openai_server.add_rule(model_is("kill"), Fault.hang(60.0), times=3)
    with own_worker(queue, node, "judge-worker-counter.log") as first:
        storm = start(demo, judge("storm"), "fbi-single-vanilla", criteria=overall)
        wait_for(finished(storm.pk), what="the run through the 429 storm")
        storm.refresh_from_db()
        assert storm.failed > 0  # some calls met two 429s in a row
        assert counter(storm) == received("storm")

        judge_run_resume(run=storm, retry_failed=True)  # the failed calls are asked again
        wait_for(lambda: counter(storm) > 0 and finished(storm.pk)(), what="the retried calls")
        wait_for(counted(storm, "storm"), timeout=10, what="the storm counted")
        assert JudgeRun.objects.get(pk=storm.pk).failed == 0

        # cancelled while every slot waits on a reply that never comes: abandoned, yet counted
        cancelled = start(demo, judge("cancel"), "fbi-single-vanilla", criteria=overall)
        wait_for(lambda: fake_openai_server.in_flight == 3, what="requests on the wire")
        judge_run_cancel(run=cancelled)
        wait_for(counted(cancelled, "cancel"), timeout=30, what="the abandoned requests counted")

        killed = start(demo, judge("kill"), "fbi-single-vanilla", criteria=overall)
        wait_for(lambda: received("kill") == 3, what="requests on the wire")
        time.sleep(0.3)
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(10)
    with own_worker(queue, node, "judge-worker-counter-restarted.log"):
        wait_for(finished(killed.pk), what="the killed run to finish after the restart")
        wait_for(counted(killed, "kill"), timeout=10, what="the killed run counted")
    killed.refresh_from_db()
    asked = killed.total - killed.cached  # distinct prompts (the criterion is not shown)
    assert killed.status == "done" and received("kill") == asked + 3 == 23
    assert counter(cancelled) == received("cancel") >= 3
