"""A new researcher on an empty database (no demo data: the catalog and the shipped judges
only) does everything from the browser: logs in, imports a CSV, sets up a study through the
steps, adds people, generates, runs a metric judge, makes an LLM judge after Test connection
against the test suite's OpenAI-compatible server, confirms a run above the study's limit,
audits a judge and opens its report card.

Each step's preview is checked against what was then created, and no page on the way shows a
raw widget (a multiple select, a JSON box) or a slug as a label."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from apps.accounts.models import Role, User
from apps.annotation.models import Study
from apps.judging.loading import judging_load
from apps.judging.models import JudgeAudit, JudgeRun
from tests.conftest import ARTIFACTS
from tests.e2e.journey import pick
from tests.e2e.screens import overflow
from tests.fakes.fixtures import fake_openai_server  # noqa: F401  (a fixture)

pytestmark = [pytest.mark.e2e, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

PASSWORD = "a-new-researcher-1"
WAIT = 120_000
SLUG = re.compile(r"^[a-z0-9]+(?:[-_][a-z0-9]+)+$")
ITEMS = "id,source,original\n" + "".join(
    f"n{n},The council met on day {n} about the bridge.,"
    f'"The council approved the bridge on day {n}. Work starts next spring, and the two '
    f'towns share the cost."\n'
    for n in range(8)
)


def plain(page: Page, name: str) -> None:
    """The page reads as words: no multiple select, no JSON box, no slug as a label, nothing
    wider than the window."""
    page.screenshot(path=str(ARTIFACTS / f"new-researcher-{name}.png"), full_page=True)
    assert page.locator("select[multiple]").count() == 0, f"{name}: a multiple select"
    for box in page.locator("textarea").all():
        value = box.input_value().strip()
        assert not value.startswith(("[", "{")), f"{name}: a JSON box {box.get_attribute('name')}"
    labels = page.locator("label, legend, summary, th").all_inner_texts()
    slugs = [text for text in labels if SLUG.match(text.strip())]
    assert not slugs, f"{name}: slugs as labels {slugs}"
    assert overflow(page) <= 0, f"{name}: wider than the window"


def test_a_new_researcher_goes_from_nothing_to_a_report_card(
    page,
    live_server,
    catalog,
    celery_worker,
    fake_openai_server,  # noqa: F811
):
    judging_load()  # what `make demo` and a deployment's set-up load: the shipped judges
    User.objects.create_user("newcomer", password=PASSWORD, role=Role.RESEARCHER)
    base = live_server.url
    page.set_default_timeout(20_000)
    page.goto(f"{base}/accounts/login/")
    page.fill("input[name=username]", "newcomer")
    page.fill("input[name=password]", PASSWORD)
    page.click("main form button[type=submit]")
    page.wait_for_url(f"{base}/")
    plain(page, "home")

    # Import a CSV; its next steps lead to a study set up with it.
    page.goto(f"{base}/imports/new/")
    plain(page, "import")
    page.set_input_files(
        "input[name=file]",
        files=[{"name": "items.csv", "mimeType": "text/csv", "buffer": ITEMS.encode()}],
    )
    page.fill("input[name=dataset]", "Newcomer data")
    page.click("main button[type=submit]")
    expect(page.locator(".status-done")).to_be_visible(timeout=WAIT)
    page.click("#next-steps a:has-text('Set up a study with it')")

    # The study, step by step; the review says what it will hold.
    plain(page, "study-data")
    page.fill("input[name=name]", "Newcomer study")
    expect(page.get_by_label("Newcomer data")).to_be_checked()
    next_step(page, "Perturbation kinds")
    pick(page, "Spelling mistake")
    pick(page, "Word exchange")
    plain(page, "study-kinds")
    next_step(page, "Criteria")
    pick(page, "Fluency — default")
    plain(page, "study-criteria")
    next_step(page, "Human work")
    page.uncheck("input[name=comparisons_need_vetting]")
    plain(page, "study-work")
    next_step(page, "People")
    next_step(page, "Review")
    plain(page, "study-review")
    review = counts(page)
    assert review["perturbations"] == 0  # nothing generated yet
    page.click("#study-form button[value=create]")
    page.wait_for_url("**/members/")
    study = Study.objects.get(name="Newcomer study")
    assert study.kinds.count() == 2 and study.criteria.count() == 1

    # People: an annotator's account, made here.
    page.fill("#create-members textarea[name=names]", "nc-ann")
    page.select_option("#create-members select[name=role]", "annotator")
    page.check("#create-members input[name=access][value=password]")
    page.click("#create-members button[type=submit]")
    expect(page.locator("#new-accounts tbody tr")).to_have_count(1)
    plain(page, "people")

    # Generate from the study page: its dataset and kinds come chosen.
    page.goto(f"{base}/studies/{study.pk}/")
    page.click("#stage-perturbations a.next")
    page.wait_for_url("**/generate/**")
    plain(page, "generate")
    page.click("main form button[type=submit]")
    expect(page.locator(".status-done")).to_be_visible(timeout=WAIT)
    created = int(page.inner_text("#created"))
    assert created == 16  # two kinds over eight items
    page.goto(f"{base}/studies/{study.pk}/")
    expect(page.locator("#perturbation-count")).to_have_text(str(created))
    # what the review's rules say for these texts: one vetting and one comparison each
    expect(page.locator("#stage-vetting dd").nth(2)).to_have_text(str(created))
    plain(page, "study")

    # A metric judge, at once.
    page.click("#stage-judging a.next")
    page.wait_for_url("**/judging/runs/new/**")
    plain(page, "run-new")
    page.select_option("select[name=judge]", label="BLEU")
    page.check("input[name=vetted_only][value=false]")
    page.click("#run-form button[type=submit]")
    page.wait_for_url("**/judging/runs/*/")
    expect(page.locator("#run-status")).to_have_text("Done", timeout=WAIT)
    assert page.inner_text("#done") == str(created + 8)  # the originals too
    expect(page.locator("#next-steps a", has_text="audit judges on it")).to_be_visible()

    # An LLM judge, its connection tested before it is saved.
    page.goto(f"{base}/judging/judges/new/")
    plain(page, "judge-new")
    page.fill("input[name=name]", "local judge")
    page.fill("input[name=base_url]", fake_openai_server.base_url)
    page.fill("input[name=model]", "judge-model")
    page.click("#test-connection")
    page.wait_for_selector("#connection-test")
    assert "Connected" in page.inner_text("#connection-test")
    page.click("main form button[type=submit]:has-text('Save')")
    page.wait_for_url("**/judging/judges/")
    tested = fake_openai_server.request_count

    # The study's limit, then a run above it: estimated, confirmed, made as estimated.
    page.goto(f"{base}/studies/{study.pk}/progress/")
    page.fill("input[name=confirm_above_requests]", "5")
    page.click("text=Save settings and build the plan")
    page.goto(f"{base}/judging/runs/new/?study={study.pk}")
    page.select_option("select[name=judge]", label="local judge")
    strategies = page.locator("select[name=strategy] option").all_inner_texts()
    page.select_option("select[name=strategy]", label=next(s for s in strategies if "vanilla" in s))
    page.check("input[name=vetted_only][value=false]")
    page.click("#run-form button[type=submit]")
    page.wait_for_selector("#run-estimate")
    plain(page, "run-estimate")
    estimated = int(page.inner_text("#estimate-http").replace(",", ""))
    assert estimated > 5 and fake_openai_server.request_count == tested  # nothing sent yet
    page.click("#start-run")  # the browser asks for the confirmation first
    assert page.inner_text("#run-status") == "not started"
    page.check("input[name=confirm]")
    page.click("#start-run")
    expect(page.locator("#run-status")).to_have_text("Done", timeout=WAIT)
    sent = fake_openai_server.request_count - tested
    assert abs(sent - estimated) <= 0.25 * estimated, (sent, estimated)
    assert JudgeRun.objects.filter(judge__name="local judge", status="done").count() == 1

    # An audit of BLEU, and its report card.
    page.goto(f"{base}/studies/{study.pk}/")
    page.click("#new-audit")
    page.wait_for_url("**/judging/audits/new/?study=*")
    plain(page, "audit-new")
    bleu = page.locator("select[name^=judge_]").filter(has=page.locator("option[value=metric]"))
    bleu.first.select_option("metric")
    page.click("text=Plan and estimate")
    page.wait_for_url("**/judging/audits/*/")
    plain(page, "audit")
    page.click("#audit-start")
    expect(page.locator("#audit-status")).to_have_text("Done", timeout=WAIT)
    assert JudgeAudit.objects.get().status == "done"
    page.locator("a", has_text="report card").first.click()
    page.wait_for_url("**/audits/*/cards/*/**")
    assert "Report card" in page.content()
    plain(page, "card")


def next_step(page: Page, title: str) -> None:
    page.click("#study-form p.actions button[value=next]")
    expect(page.locator("#step-title")).to_contain_text(title)


def counts(page: Page) -> dict[str, int]:
    cells = page.locator("#plan-preview td[data-count]")
    return {
        cells.nth(n).get_attribute("data-count"): int(cells.nth(n).inner_text().replace(",", ""))
        for n in range(cells.count())
    }
