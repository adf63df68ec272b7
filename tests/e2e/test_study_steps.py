"""The new-study steps in a browser at 390 px, keyboard only: Enter goes to the next step, a
group of kinds opens and its boxes tick from the keyboard, no step is wider than the window."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from apps.annotation.demo import DEMO_PASSWORD, demo_load
from apps.annotation.models import Study
from tests.e2e.screens import overflow

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_a_study_is_made_by_keyboard_in_a_narrow_window(browser, live_server, catalog):
    demo_load()
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    page.set_default_timeout(10_000)
    try:
        page.goto(f"{live_server.url}/accounts/login/")
        page.fill("input[name=username]", "researcher")
        page.fill("input[name=password]", DEMO_PASSWORD)
        page.click("button[type=submit]")
        page.wait_for_url(f"{live_server.url}/")
        page.goto(f"{live_server.url}/studies/new/")
        title = page.locator("#step-title")
        wider = {"Data": overflow(page)}
        page.focus("input[name=name]")
        page.keyboard.type("By keyboard")
        page.keyboard.press("Enter")  # the form's default button: Next
        expect(title).to_contain_text("Perturbation kinds")
        closed = page.evaluate(
            "[...document.querySelectorAll('details.check-group')].findIndex(d => !d.open)"
        )
        group = page.locator("details.check-group").nth(closed)
        group.locator("summary").focus()
        page.keyboard.press("Enter")
        expect(group).to_have_attribute("open", "")
        box = group.locator("input[type=checkbox]").first
        box.focus()
        page.keyboard.press("Space")
        expect(box).to_be_checked()
        group.locator("button[data-choose-all]").focus()
        page.keyboard.press("Enter")
        boxes = group.locator("input[type=checkbox]")
        for n in range(boxes.count()):
            expect(boxes.nth(n)).to_be_checked()
        for step in ("Criteria", "Human work", "People", "Review"):
            wider[title.inner_text()] = overflow(page)
            page.locator("#study-form p.actions button[value=next]").focus()
            page.keyboard.press("Enter")
            expect(title).to_contain_text(step)
        wider["Review"] = overflow(page)
        page.locator("#study-form button[value=create]").focus()
        page.keyboard.press("Enter")
        page.wait_for_url("**/members/")
    finally:
        context.close()
    assert {step: px for step, px in wider.items() if px > 0} == {}
    study = Study.objects.get(name="By keyboard")
    assert study.kinds.count() == boxes_count(study)


def boxes_count(study: Study) -> int:
    """The kinds of the group the test chose all of: every kind of one family and method."""
    kind = study.kinds.first()
    assert kind is not None
    return type(kind).objects.filter(family=kind.family, method=kind.method).count()
