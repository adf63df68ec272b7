"""A researcher sees both prices of an LLM judge's run, starts it as a batch, and watches the
run page say where the batch stands until the real worker has stored its results."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest

from apps.annotation.demo import DEMO_PASSWORD, demo_load
from apps.judging.loading import judging_load
from apps.judging.models import CallBatch, Judge, JudgeRun
from tests.e2e.screens import overflow
from tests.factories import llm_judge_save
from tests.fakes.fixtures import fake_openai_server as fake_openai_server  # the shared fixture

pytestmark = [pytest.mark.e2e, pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_researcher_starts_a_run_as_a_batch_and_sees_it_through(
    page, live_server, catalog, celery_worker, fake_openai_server, tmp_path
):
    study = demo_load()
    judging_load()
    llm_judge_save(
        user=study.owner,
        name="batched judge",
        base_url=fake_openai_server.base_url,
        model="judge-model",
        batch_api=True,
        price_per_million_prompt_tokens=Decimal("1000"),
        price_per_million_completion_tokens=Decimal("2000"),
    )
    page.goto(f"{live_server.url}/judging/runs/new/")
    page.fill("input[name=username]", "researcher")
    page.fill("input[name=password]", DEMO_PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url("**/judging/runs/new/")
    page.select_option("select[name=judge]", label="batched judge")
    page.select_option("select[name=study]", label=study.name)
    strategies = page.locator("select[name=strategy] option").all_inner_texts()
    page.select_option(
        "select[name=strategy]", label=next(s for s in strategies if "single: vanilla" in s)
    )
    page.check("input[name=vetted_only][value=false]")
    page.click("#run-form button[type=submit]")
    page.wait_for_selector("#run-estimate")
    live = float(page.inner_text("#estimate-cost"))
    batch = page.inner_text("#estimate-batch-cost")
    assert float(batch.split()[0]) == pytest.approx(live / 2, abs=1e-4)
    assert "at 50% of the price, answered within 24 h" in page.inner_text("#run-estimate")
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(tmp_path / f"batch-estimate-{width}.png"), full_page=True)
        assert overflow(page) == 0, width
    page.set_viewport_size({"width": 1280, "height": 900})
    page.click("#start-batch")
    page.wait_for_url("**/judging/runs/*/")
    page.locator("#run-batches").wait_for()
    assert "Through the batch interface" in page.inner_text("#run-batches")
    page.locator("#run-status", has_text="Done").wait_for(timeout=60_000)
    assert re.search(
        r"batch 1: completed, (\d+) of \1 done, stored", page.inner_text("#run-batches")
    )
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(tmp_path / f"batch-done-{width}.png"), full_page=True)
        assert overflow(page) == 0, width
    run = JudgeRun.objects.get(judge=Judge.objects.get(name="batched judge"))
    assert run.batch_mode and run.status == "done" and run.done == run.total and run.failed == 0
    assert run.http_requests == CallBatch.objects.get(run=run).lines
    chat = [r for r in fake_openai_server.requests if r.path.endswith("/chat/completions")]
    assert not chat and fake_openai_server.batches.created == 1


def test_researcher_starts_an_audit_as_a_batch(
    page, live_server, catalog, celery_worker, fake_openai_server, tmp_path
):
    from apps.judging.models import JudgeAudit, Strategy
    from tests.judging.conftest import llm_judge

    study = demo_load()
    judging_load()
    study.vetted_only_default = False
    study.save()
    judge = llm_judge(fake_openai_server, name="batched", user=study.owner, batch_api=True)
    single = Strategy.objects.filter(slug="cd-zero-shot").latest("version")
    page.goto(f"{live_server.url}/judging/audits/new/?study={study.pk}")
    page.fill("input[name=username]", "researcher")
    page.fill("input[name=password]", DEMO_PASSWORD)
    page.click("button[type=submit]")
    page.select_option(f"select[name=judge_{judge.pk}]", value=str(single.pk))
    page.fill("input[name=label]", "As a batch")
    page.click("text=Plan and estimate")
    page.wait_for_url("**/judging/audits/*/")
    audit = JudgeAudit.objects.get(label="As a batch")
    assert audit.estimate["batch_runs"] >= 1
    assert "batch interface" in page.inner_text("#estimate-notes")
    if page.locator("input[name=confirm]").count():
        page.check("input[name=confirm]")
    page.click("#audit-start-batch")
    page.locator("#audit-status", has_text="Done").wait_for(timeout=180_000)
    assert "stored" in page.inner_text("#audit-batches")
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(tmp_path / f"audit-batch-{width}.png"), full_page=True)
        assert overflow(page) == 0, width
    chat = [r for r in fake_openai_server.requests if r.path.endswith("/chat/completions")]
    assert not chat  # every run of the battery went as a batch (no search: no generator)
    assert 1 <= fake_openai_server.batches.created <= audit.estimate["batch_runs"]
    lines = fake_openai_server.batches.lines_answered
    # a prompt two runs share is asked in one batch only, as the estimate counts it
    assert lines <= audit.estimate["http_calls"] * 1.05
