"""Batch mode (docs/judging.md, "Batch mode"): an audit sent through the endpoint's batch
interface gives the card the live audit gives, at the batch price; a batch that expires half
done fails or hands its lines to the live path; nothing is submitted twice. Steps are worked
in this process, as the worker task does them (the worker itself: test_batch_worker.py)."""

from __future__ import annotations

import json
import re
from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError

from apps.analysis.cards.snapshots import audit_json
from apps.judging.audit_selectors import audit_parts
from apps.judging.models import BatchStatus, CallBatch, JudgeCall, JudgeRun, RunStatus
from apps.judging.services.audits import audit_plan, audit_refresh, audit_start
from apps.judging.services.batches import judge_run_batch_step
from apps.judging.services.run_start import judge_run_confirm, judge_run_estimate
from tests.judging.conftest import llm_judge, new_run, strategy

pytestmark = pytest.mark.django_db
SINGLE = "cd-zero-shot"
PRICES = {
    "price_per_million_prompt_tokens": Decimal("1000"),
    "price_per_million_completion_tokens": Decimal("2000"),
}


@pytest.fixture(autouse=True)
def quick_polls(settings):
    settings.DISCERN_BATCH_POLL_S = 0.0


@pytest.fixture
def study(demo):
    demo.vetted_only_default = False  # nobody vetted the demo's perturbations
    demo.save()
    return demo


def step_until_done(run_id: int, limit: int = 20) -> int:
    """Steps of one run until it needs no more; how many were taken."""
    for steps in range(1, limit + 1):
        if judge_run_batch_step(run_id=run_id) is None:
            return steps
    raise AssertionError(f"run {run_id} still waits after {limit} steps")


def work_audit(audit) -> None:
    runs = {p.run_id for p in audit_parts(audit) if p.run_id} | {
        p.baseline_id for p in audit_parts(audit) if p.baseline_id
    }
    for run in JudgeRun.objects.filter(pk__in=runs):
        if run.batch_mode:
            step_until_done(run.pk)
        else:
            from apps.judging.services import judge_run_work

            judge_run_work(run_id=run.pk)
    audit_refresh(audit)
    audit.refresh_from_db()


def figures(audit) -> str:
    """The cards' content, every figure and verdict, without the links to their runs (other
    ids in two audits), what the calls cost and how long they took."""
    sections = [card["card"]["sections"] for card in audit_json(audit)["cards"]]
    for section in (s for card in sections for s in card):
        for table in section.get("tables", []):
            table["rows"] = [r for r in table["rows"] if r[0] not in ("cost_usd", "latency")]
    text = json.dumps(sections, sort_keys=True)
    return re.sub(r"/judging/runs/\d+/", "/judging/runs/N/", text)


def cost_line(audit) -> list[object]:
    card = audit_json(audit)["cards"][0]["card"]
    rows = [r for s in card["sections"] for t in s.get("tables", []) for r in t["rows"]]
    return next(r for r in rows if r[0] == "cost_usd")


def test_a_batch_audit_gives_the_live_card_at_the_batch_price(study, fake_openai_server):
    live_judge = llm_judge(fake_openai_server, model="live", batch_api=True, **PRICES)
    batch_judge = llm_judge(fake_openai_server, model="batched", batch_api=True, **PRICES)
    live = audit_plan(owner=study.owner, study=study, subjects=[(live_judge, strategy(SINGLE))])
    batched = audit_plan(owner=study.owner, study=study, subjects=[(batch_judge, strategy(SINGLE))])
    estimate = batched.estimate
    assert estimate["batch_runs"] >= 1
    assert estimate["cost_batch_usd"] == pytest.approx(estimate["cost_usd"] / 2)

    audit_start(audit=live, confirmed=True)
    work_audit(live)
    live_requests = fake_openai_server.request_count
    audit_start(audit=batched, confirmed=True, batch=True)
    work_audit(batched)

    assert live.status == batched.status == "done"
    assert figures(batched) == figures(live)  # the same card
    runs = JudgeRun.objects.filter(batch_mode=True)
    assert runs.exists() and all(r.status == RunStatus.DONE for r in runs)
    live_runs = JudgeRun.objects.filter(judge=live_judge)
    assert sum(r.total for r in runs) == sum(r.total for r in live_runs)  # the same calls
    assert sum(r.http_requests for r in runs) == sum(r.http_requests for r in live_runs)
    batches = CallBatch.objects.filter(run__in=runs)
    assert fake_openai_server.batches.created == batches.count() == runs.count()
    assert all(b.status == BatchStatus.FETCHED for b in batches)
    # every live request was a chat completion; the batched audit sent none
    chat = [r for r in fake_openai_server.requests if r.path.endswith("/chat/completions")]
    assert len(chat) == live_requests
    live_cost = sum(r.estimated_cost for r in live_runs)
    batch_cost = sum(r.estimated_cost for r in runs)
    assert batch_cost == live_cost / 2 and batch_cost > 0  # the same tokens, half the price
    shown_live, shown_batch = cost_line(live), cost_line(batched)
    assert shown_batch[4] == pytest.approx(shown_live[4] / 2, abs=1e-4)
    assert "at the batch price" in shown_batch[9]


def test_a_run_shows_both_prices_and_refuses_a_batch_its_judge_cannot_send(
    study, fake_openai_server
):
    plain = llm_judge(fake_openai_server, **PRICES)
    run = new_run(study, plain, SINGLE)
    JudgeRun.objects.filter(pk=run.pk).update(status=RunStatus.PENDING)
    estimate = judge_run_estimate(run)
    assert estimate.cost and estimate.batch_cost == estimate.cost / 2
    assert "no batch interface" in estimate.batch_problem
    with pytest.raises(ValidationError, match="no batch interface"):
        judge_run_confirm(run=run, confirmed=True, batch=True)
    run.refresh_from_db()
    assert run.status == RunStatus.PENDING and not run.batch_mode  # nothing started


def test_a_batch_that_expires_half_done_fails_the_rest_with_the_reason(study, fake_openai_server):
    judge = llm_judge(fake_openai_server, batch_api=True)
    run = new_run(study, judge, SINGLE, batch_mode=True)
    fake_openai_server.batches.expire_after = 3
    step_until_done(run.pk)
    run.refresh_from_db()
    batch = CallBatch.objects.get(run=run)
    assert batch.remote_status == "expired" and batch.lines_done == 3
    answered = JudgeCall.objects.filter(run=run).exclude(parse_status="error")
    failed = JudgeCall.objects.filter(run=run, parse_status="error")
    assert answered.count() >= 3 and failed.exists()
    assert {c.error_kind for c in failed} == {"batch"}
    assert "expired before answering" in failed.first().error
    assert run.status == RunStatus.DONE and run.failed == failed.count()
    assert run.http_requests == 3  # the lines the provider answered


def test_lines_an_expired_batch_left_are_asked_live_when_the_run_allows(study, fake_openai_server):
    judge = llm_judge(fake_openai_server, batch_api=True)
    run = new_run(study, judge, SINGLE, batch_mode=True, batch_live_fallback=True)
    fake_openai_server.batches.expire_after = 2
    step_until_done(run.pk)
    run.refresh_from_db()
    batch = CallBatch.objects.get(run=run)
    assert batch.to_live > 0
    assert run.status == RunStatus.DONE and run.failed == 0
    assert not JudgeCall.objects.filter(run=run, parse_status="pending").exists()
    chat = [r for r in fake_openai_server.requests if r.path.endswith("/chat/completions")]
    assert len(chat) == batch.lines - 2  # the unanswered prompts, asked once each, live
    assert fake_openai_server.batches.created == 1
    assert run.http_requests == batch.lines  # 2 batch lines + the rest live


def test_a_step_that_died_after_submitting_finds_its_batch_instead_of_submitting_again(
    study, fake_openai_server
):
    judge = llm_judge(fake_openai_server, batch_api=True)
    run = new_run(study, judge, SINGLE, batch_mode=True)
    fake_openai_server.batches.hold = True
    judge_run_batch_step(run_id=run.pk)
    batch = CallBatch.objects.get(run=run)
    assert batch.status == BatchStatus.SUBMITTED
    # the worker died before saving the batch's id: the row still says "submitting"
    CallBatch.objects.filter(pk=batch.pk).update(status=BatchStatus.SUBMITTING, remote_id="")
    fake_openai_server.batches.release()
    step_until_done(run.pk)
    run.refresh_from_db()
    assert fake_openai_server.batches.created == 1  # found again by its token
    assert run.status == RunStatus.DONE and run.failed == 0
    assert CallBatch.objects.get(pk=batch.pk).remote_id


def test_two_steps_at_once_open_one_batch_and_store_it_once(study, fake_openai_server):
    judge = llm_judge(fake_openai_server, batch_api=True)
    run = new_run(study, judge, SINGLE, batch_mode=True)
    fake_openai_server.batches.hold = True
    judge_run_batch_step(run_id=run.pk)
    judge_run_batch_step(run_id=run.pk)  # a second task for the same run (a sweep's)
    assert fake_openai_server.batches.created == 1
    fake_openai_server.batches.release()
    step_until_done(run.pk)
    step_until_done(run.pk)
    run.refresh_from_db()
    assert run.done == run.total and run.http_requests == CallBatch.objects.get(run=run).lines


def test_a_cancelled_run_frees_its_batch_calls_for_a_resume(study, fake_openai_server):
    from apps.judging.services.runs import judge_run_cancel, judge_run_resume

    judge = llm_judge(fake_openai_server, batch_api=True)
    run = new_run(study, judge, SINGLE, batch_mode=True)
    fake_openai_server.batches.hold = True
    judge_run_batch_step(run_id=run.pk)
    judge_run_cancel(run=run)
    judge_run_batch_step(run_id=run.pk)
    assert CallBatch.objects.get(run=run).status == BatchStatus.FAILED
    assert not JudgeCall.objects.filter(run=run).exclude(claimed_by="").exists()
    fake_openai_server.batches.release()
    judge_run_resume(run=run)
    step_until_done(run.pk)
    run.refresh_from_db()
    assert run.status == RunStatus.DONE and run.done == run.total


def test_the_run_page_says_how_far_the_batch_is(study, fake_openai_server, client):
    judge = llm_judge(fake_openai_server, batch_api=True)
    run = new_run(study, judge, SINGLE, batch_mode=True)
    fake_openai_server.batches.hold = True
    judge_run_batch_step(run_id=run.pk)
    judge_run_batch_step(run_id=run.pk)
    client.force_login(study.owner)
    page = client.get(f"/judging/runs/{run.pk}/").content.decode()
    lines = CallBatch.objects.get(run=run).lines
    assert f"batch 1: submitted, 0 of {lines} done (the provider: in progress)" in page
