"""Services: strategy versions, judge checks, cancel and resume, retrying failed calls, and
recovering runs whose worker died."""

import threading
import time

import pytest
from django.core.exceptions import ValidationError
from django.db import connection

from apps.judging import claims
from apps.judging.models import Judge, JudgeCall, JudgeRun, Strategy
from apps.judging.services import (
    judge_run_cancel,
    judge_run_resume,
    judge_runs_recover,
    judge_save,
    strategy_create,
    strategy_revise,
)
from tests.factories import llm_judge_save
from tests.fakes.openai_server import Fault
from tests.judging.conftest import llm_judge, new_run, strategy, work


@pytest.fixture
def queued(monkeypatch):
    """Record the worker tasks services queue, instead of sending them to a broker."""
    from workers.tasks import judging

    sent: list[tuple] = []

    def record(run_id: int, share: int | None = None, *, metric: bool = False) -> None:
        sent.append((run_id,) if share is None else (run_id, share))

    monkeypatch.setattr(judging, "queue_run_work", record)
    return sent


def test_metric_runs_have_a_queue_of_their_own(monkeypatch):
    """A metric run (no HTTP) never waits behind LLM runs: its own queue and worker."""
    from workers.tasks import judging

    sent: list[tuple] = []
    monkeypatch.setattr(judging.work_run, "apply_async", lambda *a, **kw: sent.append((a, kw)))
    judging.queue_run_work(7, metric=True)
    judging.queue_run_work(8, 2)
    default = judging.current_app.conf.task_default_queue
    assert sent == [
        (((7, None),), {"queue": f"{default}-metrics"}),
        (((8, 2),), {"queue": None}),
    ]


@pytest.mark.django_db
def test_a_strategy_edit_is_a_new_version_and_runs_keep_theirs(demo, fake_openai_server):
    first = strategy("fbi-single-vanilla")
    run = new_run(
        demo,
        llm_judge(fake_openai_server),
        "fbi-single-vanilla",
        criteria=list(demo.criteria.all()[:1]),
    )
    second = strategy_revise(
        strategy=first,
        note="scale 1-3",
        scale_max=3,
        prompt_template=first.prompt_template.replace("excellent", "great"),
    )
    assert (second.slug, second.version, second.scale_max) == (first.slug, 2, 3)
    first.refresh_from_db()
    assert (first.version, first.scale_max) == (1, 5) and "excellent" in first.prompt_template
    run.refresh_from_db()
    assert run.strategy_id == first.pk
    assert Strategy.objects.latest_versions().get(slug=first.slug) == second
    with pytest.raises(ValidationError) as error:
        strategy_revise(strategy=second, prompt_template="Rate {{txet}}")
    assert "prompt_template" in error.value.message_dict
    with pytest.raises(ValidationError):
        strategy_create(
            slug="fbi-single-vanilla",
            name="again",
            family="single",
            prompt_template="{{text}}",
            parser="score_only",
        )
    with pytest.raises(ValidationError):  # a pairwise family needs the pairwise parser
        strategy_create(
            slug="odd",
            name="odd",
            family="pairwise",
            prompt_template="{{text_a}} {{text_b}}",
            parser="score_only",
        )


@pytest.mark.django_db
def test_judges_are_checked_and_keep_only_the_name_of_their_key(db):
    with pytest.raises(ValidationError):
        judge_save(judge=Judge(name="m", kind="metric"))
    with pytest.raises(ValidationError):
        llm_judge_save(name="x", kind="llm", model="gpt")
    with pytest.raises(ValidationError) as error:
        llm_judge_save(
            name="y", base_url="http://h/v1", model="m", default_params={"max_tokens": 9}
        )
    assert "default_params" in error.value.message_dict
    with pytest.raises(ValidationError):
        llm_judge_save(
            name="z", base_url="http://h/v1", model="m", api_key_env="sk-abc123 not a name"
        )
    judge = llm_judge_save(
        name="ok", base_url="http://h/v1", model="m", api_key_env="DISCERN_KEY_OPENAI"
    )
    assert judge.endpoint.config().api_key_env == "DISCERN_KEY_OPENAI"


@pytest.mark.django_db(transaction=True)
def test_cancel_stops_the_run_and_resume_finishes_it_without_repeating_a_call(
    demo, criteria, fake_openai_server, queued
):
    fake_openai_server.latency = 0.1
    judge = llm_judge(fake_openai_server, max_concurrency=2)
    chosen = criteria("overall", "fluency", "coherence")
    run = new_run(demo, judge, "fbi-single-axis", criteria=chosen)

    def background():
        try:
            work(run)
        finally:
            connection.close()

    worker = threading.Thread(target=background)
    worker.start()
    deadline = time.monotonic() + 20
    while JudgeRun.objects.get(pk=run.pk).done < 6 and time.monotonic() < deadline:
        time.sleep(0.02)
    judge_run_cancel(run=run)
    worker.join(20)
    run.refresh_from_db()
    assert run.status == "cancelled" and 6 <= run.done < run.total == 60
    pending = JudgeCall.objects.filter(run=run, parse_status="pending")
    assert pending.count() == run.total - run.done
    assert not pending.exclude(claimed_by="").exists()  # nothing left held
    assert fake_openai_server.request_count == run.done  # replies on the wire were kept

    judge_run_resume(run=run)
    assert queued == [(run.pk, 2)]
    run = work(run)
    assert (run.status, run.done) == ("done", 60)
    assert fake_openai_server.request_count == 60  # every call asked exactly once
    bodies = [r.body for r in fake_openai_server.requests]
    assert len(set(bodies)) == len(bodies)


@pytest.mark.django_db
def test_resume_can_retry_failed_calls_keeping_their_errors(
    demo, criteria, fake_openai_server, queued
):
    fake_openai_server.enqueue(Fault.error(400, "bad request"))  # permanent: 1 attempt
    run = work(
        new_run(
            demo,
            llm_judge(fake_openai_server),
            "fbi-single-vanilla",
            criteria=criteria("overall"),
            item_ids=[demo.datasets.get().items.first().pk],
        )
    )
    assert (run.status, run.failed, run.done) == ("done", 1, 3)
    judge_run_resume(run=run)  # nothing pending, nothing asked: stays done
    assert JudgeRun.objects.get(pk=run.pk).status == "done" and queued == []
    judge_run_resume(run=run, retry_failed=True)
    run = work(run)
    assert (run.status, run.failed, run.done) == ("done", 0, 4)
    retried = JudgeCall.objects.exclude(previous_errors=[]).get(run=run)
    assert retried.previous_errors[0]["kind"] == "client_error"
    assert retried.parse_status == "parsed"


@pytest.mark.django_db
def test_a_restarted_worker_frees_its_dead_leases_and_restarts_the_run(
    demo, queued, django_capture_on_commit_callbacks
):
    run = new_run(demo, Judge.objects.get(name="BLEU"))
    from apps.judging.services import judge_run_plan

    judge_run_plan(run_id=run.pk)
    held = claims.calls_claim(run_id=run.pk, token=claims.new_token("celery@box"), limit=5)
    other = claims.calls_claim(run_id=run.pk, token=claims.new_token("celery@other"), limit=5)
    assert len(held) == len(other) == 5
    with django_capture_on_commit_callbacks(execute=True):
        assert judge_runs_recover(node="celery@box") == [run.pk]
    assert queued == [(run.pk, run.judge.max_concurrency)]
    assert JudgeCall.objects.filter(run=run).exclude(claimed_by="").count() == 5  # other's live
    assert claims.calls_claim(run_id=run.pk, token="t", limit=20)  # the freed calls are free
    JudgeRun.objects.filter(pk=run.pk).update(heartbeat_at=None)
    JudgeCall.objects.filter(run=run).update(claimed_by="")
    assert judge_runs_recover() == []  # a quiet run, but only just created: left alone


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="SQLite has one writer: a second claim waits for the first one's commit (SKIP "
    "LOCKED is PostgreSQL's)",
)
def test_two_workers_claiming_at_once_both_get_calls(demo):
    """A claim still being written by one worker does not leave another worker empty-handed
    (it used to wait on the same rows, find them taken, and sit idle as if the run were done)."""
    from datetime import timedelta

    from django.db import transaction
    from django.utils import timezone

    from apps.judging.services import judge_run_plan

    run = new_run(demo, Judge.objects.get(name="BLEU"))
    judge_run_plan(run_id=run.pk)
    first_ids = list(JudgeCall.objects.filter(run=run).order_by("id").values_list("id", flat=True))
    writing, claimed = threading.Event(), threading.Event()
    second: list[JudgeCall] = []

    def other_worker() -> None:
        writing.wait(5)
        try:
            second.extend(claims.calls_claim(run_id=run.pk, token="second", limit=5))
        finally:
            claimed.set()
            connection.close()

    thread = threading.Thread(target=other_worker)
    thread.start()
    with transaction.atomic():  # the first worker's claim, not committed yet
        JudgeCall.objects.filter(id__in=first_ids[:5]).update(
            claimed_by="first", claimed_until=timezone.now() + timedelta(seconds=15)
        )
        writing.set()
        claimed.wait(3)  # the second claim must not wait for this one to commit
    thread.join(5)
    assert len(second) == 5
    assert {c.pk for c in second}.isdisjoint(first_ids[:5])
