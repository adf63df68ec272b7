"""Gold validation in a real browser: after an adversarial search of the study (an LLM
generator and gold judge on the local fake server), three annotators label each adversarial
text good or not good with the keyboard; the researcher's report then shows the accuracy of
the gold label and the annotators' agreement, as computed by hand."""

import pytest
from playwright.sync_api import expect

from apps.annotation.demo import DEMO_PASSWORD, demo_load
from apps.annotation.models import GoldCheck
from apps.judging.loading import judging_load
from tests.conftest import ARTIFACTS
from tests.e2e.screens import log_in, press
from tests.fakes.fixtures import fake_openai_server  # noqa: F401  (a fixture)
from tests.judging.scripted_search import searched_study

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

#: Per item, the labels of the three annotators (1 good, 2 not good), as in the hand case of
#: tests/analysis/test_adversarial_report.py: accuracy 2/4, alpha 7/18.
KEYS = {"item 0": "111", "item 1": "222", "item 2": "112", "item 3": "221"}


def test_three_annotators_label_the_adversarial_texts_by_keyboard(
    page,
    live_server,
    catalog,
    browser,
    fake_openai_server,  # noqa: F811
):
    study = demo_load()
    judging_load()
    searched = searched_study(study, fake_openai_server, items=4, thread=True)
    base = live_server.url
    for n, person in enumerate(searched.annotators):
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        tab = context.new_page()
        log_in(tab, base, person.username)
        tab.goto(f"{base}/studies/{study.pk}/")
        tab.click("text=Check adversarial texts")
        tab.wait_for_url(f"**/studies/{study.pk}/gold-check/")
        expect(tab.locator("#task")).to_be_visible()
        expect(tab.locator("#criterion")).to_be_visible()
        for done in range(1, 5):
            source = tab.locator("#source").inner_text()
            item = next(name for name in KEYS if name.split()[1] in source.split(":")[0])
            if n == 0 and done == 1:
                tab.screenshot(path=str(ARTIFACTS / "gold-check.png"), full_page=True)
            press(tab, KEYS[item][n])
            expect(tab.locator("#my-count")).to_have_text(str(done))
            expect(tab.locator("#save-status")).to_contain_text("Saved")
        expect(tab.locator("#no-work")).to_be_visible()
        context.close()
    assert GoldCheck.objects.filter(study=study).count() == 12

    log_in(page, base, "researcher", DEMO_PASSWORD)
    page.goto(f"{base}/studies/{study.pk}/reports/adversarial-search/")
    section = page.locator("section", has_text="Gold validation").last
    expect(section).to_contain_text("accuracy of the gold label")
    text = section.inner_text()
    assert "0.5" in text and "0.389" in text  # 2/4, and 7/18 to three significant figures
