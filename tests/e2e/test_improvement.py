"""A researcher improves a judge from its report card, in the browser, with the real worker:
the estimate first, then Start, the progress, the recommendation with the blind spots it
closed, and Adopt. Both pages fit 1280 px and a 390 px phone (docs/improve.md)."""

from __future__ import annotations

import time

import pytest

from apps.judging.loading import judging_load
from apps.judging.models import AuditPart, Improvement, JudgeRun, PartKind, Strategy
from apps.judging.services import judge_run_start
from apps.judging.services.audits import audit_plan
from tests.analysis.test_improvement import MISSED, RUBRIC, _study
from tests.conftest import ARTIFACTS
from tests.e2e.screens import log_in, overflow
from tests.factories import llm_judge_save
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.scripted_judges import ScriptedJudges

pytestmark = [pytest.mark.e2e, pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def _shots(page, name: str) -> None:
    """The page at 1280 px and at 390 px: a screenshot each, and nothing wider than the window."""
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(ARTIFACTS / f"{name}-{width}.png"), full_page=True)
        assert overflow(page) == 0, f"{name} at {width} px"
    page.set_viewport_size({"width": 1280, "height": 900})


def test_a_researcher_improves_a_judge_from_its_card(page, live_server, catalog, celery_worker):
    judging_load()
    study = _study()
    owner = study.owner
    current = Strategy.objects.filter(slug="cd-zero-shot").latest("version")
    with FakeOpenAIServer(reply=ScriptedJudges.of(study, MISSED, caught_by=RUBRIC)) as server:
        judge = llm_judge_save(
            user=owner, name="careless", base_url=server.base_url, model="careless",
            max_concurrency=8, timeout_s=10.0,
        )  # fmt: skip
        audit = audit_plan(owner=owner, study=study, subjects=[(judge, current)])
        subject = audit.subjects.get()
        card_run = AuditPart.objects.get(subject=subject, part=PartKind.FBI_SINGLE).run
        judge_run_start(run=card_run)  # worked by the suite's worker (this thread runs a loop)
        deadline = time.monotonic() + 120
        while not JudgeRun.objects.get(pk=card_run.pk).finished:
            assert time.monotonic() < deadline, "the card's run did not finish"
            time.sleep(0.5)

        log_in(page, live_server.url, owner.username)
        page.set_default_navigation_timeout(60_000)  # the first open builds the card
        page.goto(f"{live_server.url}/audits/{audit.pk}/cards/{subject.pk}/")
        _shots(page, "improve-card")
        page.click("#improve-estimate")
        page.wait_for_url("**/improvements/*/")
        assert "Before anything is sent" in page.inner_text("#estimate")
        requests = page.inner_text("#estimate-training")
        assert int(requests.split("\t")[3]) > 0
        _shots(page, "improvement-estimate")
        confirm = page.locator("input[name=confirm]")  # its requests exceed the study's limit
        assert "above the limit of 500" in page.inner_text("#estimate")
        confirm.check()
        page.click("#start")
        improvement = Improvement.objects.get()
        deadline = time.monotonic() + 300
        while not page.locator("#headline").count():
            assert time.monotonic() < deadline, page.inner_text("#progress")
            time.sleep(1)
            page.reload()
        headline = page.inner_text("#headline")
        assert headline.startswith("Adopt FBI single: rubric"), headline
        assert page.inner_text("#closed") == "Negation, Word exchange"
        assert page.inner_text("#opened") == "none"
        missed = page.locator("#before-after tr[data-key=missed_held_out]").inner_text()
        assert "texts)" in missed  # each figure with its N in texts
        _shots(page, "improvement-result")
        page.click("#adopt")
        page.wait_for_selector("text=Adopted as")
        improvement.refresh_from_db()
        assert improvement.adopted is not None and improvement.adopted.created_by == owner
        _shots(page, "improvement-adopted")
