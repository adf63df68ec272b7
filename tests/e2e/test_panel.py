"""A recruited panel in a real browser (docs/annotation.md, "Recruiting a panel"): the
researcher opens a recruitment link and sets the panel; three participants arrive through a
Prolific-style link; one fails the attention check and is screened out, two reach their
quota, see the completion code and are sent to the completion URL; the researcher approves
one, rejects one with a reason, and downloads the decisions."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from apps.annotation.models import Participant, Vetting
from tests.annotation.factories import study_setup
from tests.annotation.test_controls import vetting_controls
from tests.conftest import ARTIFACTS
from tests.e2e.screens import log_in, overflow, press

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]
QUOTA = 4


def set_up_panel(page: Page, base: str, study) -> str:
    """The researcher opens the study's link and sets the panel: the link's URL."""
    log_in(page, base, study.owner.username)
    page.goto(f"{base}/studies/{study.pk}/")
    page.click("text=Recruited panel")
    page.click("#link-new button")
    url = page.locator("code.link-url").inner_text()
    page.fill("#id_consent", "Your answers are kept for research.")
    page.fill("#id_items_per_participant", str(QUOTA))
    page.fill("#id_completion_code", "C0DE")
    page.fill("#id_completion_url", f"{base}/healthz?cc=C0DE")
    page.fill("#id_screen_items", "4")
    page.fill("#id_screen_failures", "0")
    page.fill("#id_screened_out_code", "SCR33N")
    page.click("#panel-settings button[type=submit]")
    expect(page.locator(".flash")).to_contain_text("Panel settings saved")
    return url


def shot(tab: Page, name: str) -> None:
    width = tab.viewport_size["width"] if tab.viewport_size else 0
    tab.screenshot(path=str(ARTIFACTS / f"panel-{name}-{width}.png"), full_page=True)
    assert overflow(tab) == 0, f"{name} at {width} px: the page is wider than the window"


def take_part(browser, link: str, pid: str, controls: set[int], careful: bool, width: int) -> Page:
    """A participant arrives from Prolific, agrees and vets until they are sent away: the
    careful ones answer the control items right (invalid), the careless one never does."""
    context = browser.new_context(viewport={"width": width, "height": 900})
    tab = context.new_page()
    tab.set_default_timeout(10_000)
    tab.goto(f"{link}?PROLIFIC_PID={pid}&STUDY_ID=prolific-study&SESSION_ID=s-{pid}")
    expect(tab.locator("#join")).to_contain_text("Your answers are kept for research.")
    shot(tab, "join")
    tab.check("input[name=consent]")
    tab.click("text=Start")
    tab.wait_for_selector("#verdict-form")
    shot(tab, "work")
    for _ in range(QUOTA):
        tab.wait_for_selector("#verdict-form, #complete, #screened-out")
        if tab.locator("#verdict-form").count() == 0:
            break
        action = tab.locator("#verdict-form").get_attribute("action") or ""
        unit = int(re.search(r"/vet/(\d+)/", action).group(1))  # type: ignore[union-attr]
        press(tab, "2" if careful and unit in controls else "1")
        tab.wait_for_function(
            f"!document.querySelector('#verdict-form[action=\"{action}\"]')", timeout=10_000
        )
    tab.wait_for_selector("#complete, #screened-out")
    return tab


def test_three_participants_two_complete_one_screened_out_and_the_decisions(
    page, live_server, browser
):
    setup = study_setup(perturbations=12, annotators=0, control_every=2)
    study = setup.study
    controls = {c.perturbation_id for c in vetting_controls(study, 6)}
    base = live_server.url
    link = set_up_panel(page, base, study)

    for pid, careful, width in (
        ("AAA111", True, 1280),
        ("BBB222", False, 1280),
        ("CCC333", True, 390),
    ):
        tab = take_part(browser, link, pid, controls, careful, width)
        if careful:
            shot(tab, "complete")
            expect(tab.locator("#code")).to_have_text("C0DE")
            tab.wait_for_url(f"{base}/healthz?cc=C0DE", timeout=15_000)  # back to Prolific
        else:
            expect(tab.locator("#screened-out")).to_contain_text("not a good fit")
            expect(tab.locator("#code")).to_have_text("SCR33N")
            shot(tab, "screened-out")
        tab.context.close()
    statuses = dict(Participant.objects.values_list("external_id", "status"))
    assert statuses == {"AAA111": "complete", "BBB222": "screened-out", "CCC333": "complete"}
    for pid in ("AAA111", "CCC333"):
        user = Participant.objects.get(external_id=pid).user
        assert Vetting.answers.filter(annotator=user).count() == QUOTA

    shot(page, "settings")
    page.click("#review-link")
    expect(page.locator("#participants")).to_contain_text("AAA111")
    # Time on task, as their pages measured it: every careful participant has some.
    for pid in ("AAA111", "CCC333"):
        expect(page.locator("tr", has_text=pid)).to_contain_text(f"N={QUOTA}")
    expect(page.locator("#time-medians")).to_contain_text("Median active time per person")
    row = page.locator("tr", has_text="AAA111")
    row.locator("button[value=approved]").click()
    expect(page.locator("tr", has_text="AAA111").locator(".decision")).to_have_text("Approved")
    row = page.locator("tr", has_text="BBB222")
    row.locator("input[name=reason]").fill("Failed the attention checks")
    row.locator("button[value=rejected]").click()
    expect(page.locator("tr", has_text="BBB222").locator(".decision")).to_contain_text(
        "Rejected: Failed the attention checks"
    )
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        shot(page, "participants")
    with page.expect_download() as got:
        page.click("#decisions-csv")
    rows = list(csv.reader(io.StringIO(Path(got.value.path()).read_text(encoding="utf-8"))))
    assert rows == [
        ["participant_id", "decision", "reason"],
        ["AAA111", "approved", ""],
        ["BBB222", "rejected", "Failed the attention checks"],
    ]
