"""A real browser logs in and opens the study page."""

import pytest

from apps.annotation.demo import DEMO_PASSWORD, demo_load

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_researcher_logs_in_and_opens_the_demo_study(page, live_server, catalog):
    study = demo_load()
    page.goto(f"{live_server.url}/studies/{study.pk}/")
    assert "/accounts/login/" in page.url
    page.fill("input[name=username]", "researcher")
    page.fill("input[name=password]", DEMO_PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"**/studies/{study.pk}/")
    assert page.locator("h1").inner_text() == study.name
    assert page.locator("#item-count").inner_text() == "6"
    assert page.locator("#perturbation-count").inner_text() == "14"
    page.click("text=Datasets")
    page.wait_for_url("**/datasets/")
    assert page.locator("td a", has_text="Demo news summaries").is_visible()


def test_wrong_password_is_refused(page, live_server, catalog):
    demo_load()
    page.goto(f"{live_server.url}/")
    page.fill("input[name=username]", "researcher")
    page.fill("input[name=password]", "wrong")
    page.click("button[type=submit]")
    assert page.locator(".error").is_visible()
    assert "/accounts/login/" in page.url
