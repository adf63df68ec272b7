"""The files CI tools read, from the card pages in Chromium: "For CI" links to JUnit XML and
promptfoo's results JSON show on a report card and on the judges side by side, in a wide
window and a phone's, without widening the page; a click downloads a JUnit file with a
failure per miss (docs/audit.md, "In CI")."""

from __future__ import annotations

import pytest
from junitparser import Failure, JUnitXml

from tests.analysis.audit_builders import scripted_audit
from tests.conftest import ARTIFACTS
from tests.e2e.screens import log_in, overflow

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def _links_fit(page, width: int) -> None:
    for link in ("#ci-junit", "#ci-promptfoo"):
        assert page.locator(link).is_visible(), link
        box = page.locator(link).bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width, link
    assert overflow(page) == 0


@pytest.mark.parametrize("width", [1280, 390])
def test_the_card_pages_link_their_ci_files(browser, live_server, catalog, width, tmp_path):
    audit, _careful, careless = scripted_audit(n_items=6)
    context = browser.new_context(viewport={"width": width, "height": 900}, accept_downloads=True)
    page = context.new_page()
    page.set_default_timeout(10_000)
    ARTIFACTS.mkdir(exist_ok=True)
    try:
        log_in(page, live_server.url, audit.owner.username)
        for name, path in (
            ("card", f"/audits/{audit.pk}/cards/{careless.pk}/"),
            ("compare", f"/audits/{audit.pk}/compare/"),
        ):
            page.goto(live_server.url + path)
            page.locator("#ci-files").scroll_into_view_if_needed()
            page.screenshot(path=str(ARTIFACTS / f"ci-files-{name}-{width}.png"))
            _links_fit(page, width)
        page.goto(f"{live_server.url}/audits/{audit.pk}/cards/{careless.pk}/")
        with page.expect_download() as download:
            page.click("#ci-junit")
        saved = tmp_path / download.value.suggested_filename
        download.value.save_as(saved)
    finally:
        context.close()
    (suite,) = JUnitXml.fromfile(str(saved))
    failed = [c.name for c in suite if any(isinstance(r, Failure) for r in c.result)]
    assert suite.name == str(careless) and len(failed) == suite.failures > 0
    assert "Errors missed: perturbed text not scored lower than its original (all kinds)" in failed
