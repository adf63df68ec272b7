"""A researcher audits two judges from the study page: chooses a strategy for the LLM judge and
BLEU, reads the estimate, starts the battery, watches every part finish in the real Celery
worker, and follows the link to a judge's report card (docs/audit.md)."""

import pytest

from apps.annotation.demo import DEMO_PASSWORD, demo_load
from apps.judging.loading import judging_load
from apps.judging.models import Judge, JudgeAudit, Strategy
from tests.conftest import ARTIFACTS
from tests.fakes.fixtures import fake_openai_server  # noqa: F401  (a fixture)
from tests.judging.conftest import llm_judge

pytestmark = [pytest.mark.e2e, pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_researcher_audits_two_judges_from_the_study_page(
    page,
    live_server,
    catalog,
    celery_worker,
    fake_openai_server,  # noqa: F811
):
    study = demo_load()
    judging_load()
    study.vetted_only_default = False
    study.confirm_above_requests = 10  # this study's researcher confirms anything above 10
    study.save()
    judge = llm_judge(fake_openai_server, name="careful", user=study.owner)
    bleu = Judge.objects.get(metric="bleu")
    single = Strategy.objects.filter(slug="cd-zero-shot").latest("version")
    page.goto(f"{live_server.url}/studies/{study.pk}/")
    page.fill("input[name=username]", "researcher")
    page.fill("input[name=password]", DEMO_PASSWORD)
    page.click("button[type=submit]")
    page.click("#new-audit")
    page.wait_for_url("**/judging/audits/new/?study=*")
    page.select_option(f"select[name=judge_{judge.pk}]", value=str(single.pk))
    page.select_option(f"select[name=judge_{bleu.pk}]", value="metric")
    page.fill("input[name=label]", "Careful vs BLEU")
    page.screenshot(path=str(ARTIFACTS / "audit-new.png"), full_page=True)
    page.click("text=Plan and estimate")
    page.wait_for_url("**/judging/audits/*/")
    audit = JudgeAudit.objects.get(label="Careful vs BLEU")
    calls = page.locator("#estimate-calls").inner_text()
    assert int(calls) == audit.estimate["calls"] > 0
    assert page.locator("#audit-status").inner_text() == "Planned, not started"
    assert page.locator("td.skipped", has_text="metric judges have no pairwise mode").count() == 1
    page.screenshot(path=str(ARTIFACTS / "audit-estimate.png"), full_page=True)
    page.click("#audit-start")  # the browser asks for the confirmation first
    assert page.locator("#audit-status").inner_text() == "Planned, not started"
    page.check("input[name=confirm]")
    page.click("#audit-start")
    page.locator("#audit-status", has_text="Done").wait_for(timeout=180_000)
    page.screenshot(path=str(ARTIFACTS / "audit-done.png"), full_page=True)
    audit.refresh_from_db()
    assert audit.status == "done"
    assert page.locator("#audit-resume").count() == 0 and page.locator("#audit-cancel").count() == 0
    page.locator("a", has_text="report card").first.click()
    page.wait_for_url("**/audits/*/cards/*/**")
    assert "Report card" in page.content()
