"""Time on task in a real browser, on each database: the page's clock counts the time the
annotator is there, stops after a minute without input and while the tab is hidden, and the
researcher reads each annotator's active time on the progress page. The browser's clock is
Playwright's, moved on by the test (minutes pass in a moment)."""

import pytest
from playwright.sync_api import Page, expect

from apps.annotation.models import JudgementChange
from tests.annotation.factories import study_setup
from tests.conftest import ARTIFACTS
from tests.e2e.screens import log_in, overflow

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def answer(page: Page, done: int) -> None:
    """Valid (key 1), once the page has settled; wait for the save."""
    page.wait_for_selector('body[data-settled="1"]', state="attached")
    page.keyboard.press("1")
    expect(page.locator("#my-count")).to_have_text(str(done))


def tab_hidden(page: Page, hidden: bool) -> None:
    """The tab goes to the background (another tab in front) or comes back."""
    state = "hidden" if hidden else "visible"
    page.evaluate(
        """state => {
            Object.defineProperty(document, "visibilityState", {get: () => state, configurable: true});
            document.dispatchEvent(new Event("visibilitychange"));
        }""",
        state,
    )


def test_active_time_leaves_out_idle_minutes_and_hidden_tabs(page, live_server, browser):
    setup = study_setup(perturbations=3, annotators=1, prefix="tt")
    study, person = setup.study, setup.annotators[0]
    base = live_server.url
    log_in(page, base, person.username)
    page.clock.install()
    page.goto(f"{base}/studies/{study.pk}/vet/")

    page.clock.run_for(20_000)  # reads the first text for 20 s
    answer(page, 1)
    page.clock.run_for(5 * 60_000)  # leaves the desk for 5 minutes: one minute counts
    answer(page, 2)
    page.mouse.click(5, 5)
    tab_hidden(page, True)
    page.clock.run_for(2 * 60_000)  # two minutes in another tab: none counts
    tab_hidden(page, False)
    page.mouse.click(5, 5)
    page.clock.run_for(10_000)
    answer(page, 3)

    saved = list(
        JudgementChange.objects.filter(user=person)
        .order_by("id")
        .values_list("active_seconds", flat=True)
    )
    # What the test's own steps take (a few real seconds) is counted too.
    for seconds, expected in zip(saved, (20, 60, 10), strict=True):
        assert expected <= seconds < expected + 8, saved

    page = browser.new_page()  # the researcher's own browser, on the real clock
    log_in(page, base, study.owner.username)
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{base}/studies/{study.pk}/progress/")
        row = page.locator("#annotators tbody tr", has_text=person.username)
        expect(row).to_contain_text("1 min 3")  # 90 s and the test's own seconds
        expect(row).to_contain_text("N=3")
        expect(page.locator("#time-on-task")).to_contain_text("Median active time per unit")
        page.screenshot(path=str(ARTIFACTS / f"time-on-task-{width}.png"), full_page=True)
        assert overflow(page) == 0
