"""Importing a judge in the browser (docs/import.md): upload the shipped promptfoo example,
read the mapping and the prompt, save; at a desktop and a phone's width, nothing widens the
page (the mapping's table scrolls in its own box, prompts wrap)."""

from __future__ import annotations

import pytest

from apps.judging.models import Judge
from tests.conftest import ARTIFACTS
from tests.e2e.screens import log_in, overflow
from tests.factories import UserFactory
from tests.judging.import_helpers import INSPECT_EXAMPLE, PROMPTFOO_EXAMPLE

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("width", [1280, 390])
def test_a_researcher_imports_a_promptfoo_judge(browser, live_server, catalog, width):
    UserFactory(username="rita", role="researcher")
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    page.set_default_timeout(10_000)
    ARTIFACTS.mkdir(exist_ok=True)
    shot = str(ARTIFACTS / f"judge-import-{width}")
    try:
        log_in(page, live_server.url, "rita")
        page.goto(f"{live_server.url}/judging/judges/")
        page.click("#import-judge")
        page.set_input_files("input[name=file]", str(PROMPTFOO_EXAMPLE))
        page.click("#import-form button[type=submit]")
        page.wait_for_selector("#import-preview")
        assert "Discern compares scores, not pass/fail" in page.inner_text("#import-preview")
        assert "<Rubric>" in page.inner_text("pre.import-prompt >> nth=1")
        assert overflow(page) == 0
        page.screenshot(path=f"{shot}-preview.png", full_page=True)
        page.click("#import-save button[type=submit]")
        page.wait_for_url(f"{live_server.url}/judging/judges/")
        assert "Demo rubric: llm-rubric" in page.inner_text("#judges")
        page.goto(f"{live_server.url}/judging/judges/import/")
        page.set_input_files("input[name=file]", str(INSPECT_EXAMPLE))
        page.click("#import-form button[type=submit]")
        page.wait_for_selector("#import-preview")
        assert overflow(page) == 0
        page.screenshot(path=f"{shot}-inspect.png", full_page=True)
        page.goto(f"{live_server.url}/judging/judges/import/")
        page.set_input_files(
            "input[name=file]",
            files=[{"name": "bad.yaml", "mimeType": "text/yaml", "buffer": b"tests: [oops"}],
        )
        page.click("#import-form button[type=submit]")
        page.wait_for_selector("#import-problems")
        assert overflow(page) == 0
        page.screenshot(path=f"{shot}-refused.png", full_page=True)
    finally:
        context.close()
    assert Judge.objects.filter(name="Demo rubric: llm-rubric").count() == 1
