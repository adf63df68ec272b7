"""A real browser walks the annotation flows of the demo study, as people would.

The annotator vets ten perturbations with the keyboard (editing one), compares ten pairs and
goes back to change a choice, rates ten texts (direct assessment); the expert votes; the
researcher sees the counts and weights, and the ratings in the judge-vs-human report.
Screenshots of every page go to test-artifacts/.
"""

import pytest
from playwright.sync_api import Page, expect

from apps.annotation.demo import DEMO_PASSWORD, demo_load
from apps.annotation.models import Assessment, Comparison, ExpertVote, JudgementChange, Vetting
from apps.corpus.models import PerturbationVersion
from tests.conftest import ARTIFACTS
from tests.e2e.screens import log_in, overflow, press

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def shot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"annotation-{name}.png"), full_page=True)
    assert overflow(page) == 0, f"{name}: the page is wider than the window"


@pytest.fixture
def study(catalog):
    return demo_load()


def test_annotator_vets_edits_and_compares_with_the_keyboard(page, live_server, study):
    base = live_server.url
    log_in(page, base, "annotator", DEMO_PASSWORD)
    page.goto(f"{base}/studies/{study.pk}/")
    page.click("text=Vet perturbations")
    page.wait_for_url(f"**/studies/{study.pk}/vet/")
    expect(page.locator("#perturbed ins.diff-ins, #original del.diff-del").first).to_be_visible()
    shot(page, "vetting")
    # each answer button reads as one line: its radio, its key, its words side by side
    for answer in page.locator("label.choice").all():
        radio, key = answer.locator("input").bounding_box(), answer.locator("kbd").bounding_box()
        assert radio and key and key["width"] < 40, key
        assert abs((radio["y"] + radio["height"] / 2) - (key["y"] + key["height"] / 2)) < 6

    for n in range(1, 11):
        if n == 3:  # edit this one: the diff follows the typing, then the edit is saved
            press(page, "e")
            area = page.locator("#edit textarea[name=text]")
            expect(area).to_be_focused()
            area.fill(area.input_value() + " Officials declined to comment.")
            expect(page.locator("#texts")).to_contain_text("preview, not saved")
            expect(page.locator("#perturbed ins.diff-ins").last).to_contain_text("declined")
            shot(page, "vetting-edit-preview")
            area.press("Control+Enter")
            expect(page.locator("#version")).to_contain_text("edited by you")
            area.press("Escape")
            shot(page, "vetting-edited")
        press(page, "1" if n % 4 else "3")  # valid, and now and then score-invariant
        expect(page.locator("#my-count")).to_have_text(str(n))
        expect(page.locator("#save-status")).to_contain_text("Saved")

    assert Vetting.objects.count() == 10
    edited = Vetting.objects.get(edited_version__isnull=False)
    assert edited.edited_version.number == 2
    assert PerturbationVersion.objects.get(number=2).text.endswith("Officials declined to comment.")

    press(page, "p")  # back to the last verdict, and change it
    expect(page.locator("#revisit")).to_be_visible()
    shot(page, "vetting-back")
    press(page, "2")
    expect(page.locator("#save-status")).to_contain_text("Invalid")
    assert Vetting.objects.count() == 10
    assert Vetting.objects.filter(verdict="invalid").count() == 1

    # Their last verdicts: loaded when the list is opened, each a link back to its item.
    page.click("details.recent summary")
    listed = page.locator("details.recent ol li a")
    expect(listed).to_have_count(8)
    expect(page.locator("details.recent ol")).to_contain_text("Invalid")
    shot(page, "vetting-recent")
    listed.nth(1).click()
    expect(page.locator("#revisit")).to_be_visible()

    press(page, "g")
    expect(page.locator("dialog#guidelines")).to_be_visible()
    shot(page, "guidelines")
    page.keyboard.press("Escape")

    page.goto(f"{base}/studies/{study.pk}/compare/")
    expect(page.locator("#criterion")).to_contain_text("summary")
    shot(page, "comparison")
    for n, key in zip(range(1, 11), "abcdabcdab", strict=True):
        press(page, key)
        expect(page.locator("#my-count")).to_have_text(str(n))
    assert Comparison.objects.count() == 10
    press(page, "p")
    expect(page.locator("#revisit")).to_be_visible()
    press(page, "d")
    expect(page.locator("#save-status")).to_contain_text("Saved: D")
    assert Comparison.objects.count() == 10
    assert JudgementChange.objects.filter(judgement="comparison").count() == 11
    for comparison in Comparison.objects.all():  # the order shown is recorded and normalised
        expected = {"C": "same", "D": "uncertain"}.get(comparison.choice)
        if expected is None:
            first_better = comparison.choice == "A"
            expected = "worse" if first_better == comparison.original_first else "better"
        assert comparison.outcome == expected


def test_expert_votes_and_researcher_sees_counts_and_weights(page, live_server, study, browser):
    base = live_server.url
    log_in(page, base, "expert", DEMO_PASSWORD)
    page.goto(f"{base}/studies/{study.pk}/")
    page.click("text=Expert survey")
    page.wait_for_url(f"**/studies/{study.pk}/survey/")
    cards = page.locator("form.card")
    total = cards.count()
    assert total == 14  # one task (summarization) x the demo's 14 kinds
    expect(page.get_by_text("Whether the facts in the summary agree").first).to_be_visible()
    for n in range(total):
        page.keyboard.press(str(n % 4 + 1))
        expect(page.locator("#answered")).to_have_text(str(n + 1))
        page.keyboard.press("j")
    shot(page, "survey")
    assert ExpertVote.objects.count() == 14

    researcher = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    log_in(researcher, base, "researcher", DEMO_PASSWORD)
    researcher.goto(f"{base}/studies/{study.pk}/")
    researcher.click("text=Progress, weights and settings")
    researcher.wait_for_url(f"**/studies/{study.pk}/progress/")
    expect(researcher.locator("#vote-count")).to_have_text("14")
    expect(researcher.locator("#weights")).to_contain_text("1.00")
    shot(researcher, "progress")
    researcher.context.close()


def test_researcher_sees_live_counts(page, live_server, study, browser):
    base = live_server.url
    log_in(page, base, "researcher", DEMO_PASSWORD)
    page.goto(f"{base}/studies/{study.pk}/progress/")
    expect(page.locator("#vetting-count")).to_have_text("0")
    annotator = browser.new_context().new_page()
    log_in(annotator, base, "annotator", DEMO_PASSWORD)
    annotator.goto(f"{base}/studies/{study.pk}/vet/")
    for n in range(1, 4):
        press(annotator, "1")
        expect(annotator.locator("#my-count")).to_have_text(str(n))
    annotator.context.close()
    expect(page.locator("#vetting-count")).to_have_text("3", timeout=12_000)  # polled every 5 s
    expect(page.locator("#annotators")).to_contain_text("annotator")
    shot(page, "progress-live")


def test_a_lost_connection_is_shown_and_the_verdict_sent_again(page, live_server, study):
    base = live_server.url
    log_in(page, base, "annotator", DEMO_PASSWORD)
    failures = {"left": 2}

    def flaky(route):
        if failures["left"]:
            failures["left"] -= 1
            route.abort("internetdisconnected")
        else:
            route.continue_()

    page.route("**/verdict/", flaky)
    page.goto(f"{base}/studies/{study.pk}/vet/")
    press(page, "1")
    expect(page.locator("#connection")).to_contain_text("Connection lost")
    shot(page, "connection-lost")
    expect(page.locator("#my-count")).to_have_text("1", timeout=15_000)
    expect(page.locator("#connection")).to_be_hidden()
    assert Vetting.objects.count() == 1
    assert JudgementChange.objects.count() == 1


def test_a_server_error_is_retried_with_the_same_key(page, live_server, study):
    base = live_server.url
    log_in(page, base, "annotator", DEMO_PASSWORD)
    seen = []

    def failing_once(route):
        seen.append(route.request.post_data)
        if len(seen) == 1:  # the server saved it, but the answer never arrived
            route.fetch()
            route.fulfill(status=502, body="bad gateway")
        else:
            route.continue_()

    page.route("**/verdict/", failing_once)
    page.goto(f"{base}/studies/{study.pk}/vet/")
    press(page, "4")
    expect(page.locator("#my-count")).to_have_text("1", timeout=15_000)
    assert len(seen) == 2 and seen[0] == seen[1]  # the very same form, key included
    assert Vetting.objects.get().verdict == "not-relevant"
    assert JudgementChange.objects.count() == 1


def test_an_annotator_cannot_open_the_progress_page(page, live_server, study):
    base = live_server.url
    log_in(page, base, "annotator", DEMO_PASSWORD)
    response = page.goto(f"{base}/studies/{study.pk}/progress/")
    assert response.status == 403
    response = page.goto(f"{base}/studies/{study.pk}/survey/")
    assert response.status == 403


def test_a_verdict_survives_a_session_that_ended(page, live_server, study):
    base = live_server.url
    log_in(page, base, "annotator", DEMO_PASSWORD)
    page.goto(f"{base}/studies/{study.pk}/vet/")
    page.context.clear_cookies(name="sessionid")  # the session ran out
    press(page, "1")
    expect(page.locator("#connection")).to_contain_text("logged out")
    expect(page.locator("#verdict-form")).to_be_visible()  # the login page was not swapped in
    shot(page, "logged-out")
    other = page.context.new_page()
    log_in(
        other, base, "annotator", DEMO_PASSWORD
    )  # in another tab; this also rotates the CSRF token
    expect(page.locator("#my-count")).to_have_text("1", timeout=15_000)
    assert Vetting.objects.count() == 1


def _judged_and_imported(study) -> None:
    """A judge's coherence and fluency scores on every demo text, and two imported raters'
    ratings of the originals, as a researcher would have them (stored directly)."""
    from apps.corpus.models import Perturbation, SourceItem
    from tests.analysis.builders import judge_run, rate, score

    run = judge_run(study, name="e2e-judge")
    for n, item in enumerate(SourceItem.objects.filter(dataset__studies=study).order_by("pk")):
        for aspect in ("coherence", "fluency"):
            score(run, item, None, float(n % 5 + 1), criterion=f"discern-{aspect}-default")
            rate(item, None, aspect, "imported-1", float(n % 5 + 1))
            rate(item, None, aspect, "imported-2", float((n + 1) % 5 + 1))
        for p in Perturbation.objects.filter(item=item):
            for aspect in ("coherence", "fluency"):
                score(run, item, p, float(n % 3 + 1), criterion=f"discern-{aspect}-default")


def test_annotator_rates_texts_by_keyboard_and_the_researcher_sees_the_ratings(
    page, live_server, study, browser
):
    _judged_and_imported(study)
    base = live_server.url
    log_in(page, base, "annotator", DEMO_PASSWORD)
    page.goto(f"{base}/studies/{study.pk}/")
    page.click("text=Rate texts")
    page.wait_for_url(f"**/studies/{study.pk}/assess/")
    expect(page.locator("#criterion")).to_contain_text("summary")
    expect(page.locator("#rated-text")).not_to_be_empty()
    shot(page, "assessment")

    for n in range(1, 11):
        press(page, str(n % 5 + 1))  # one key: the digit saves the rating, the next text comes
        expect(page.locator("#my-count")).to_have_text(str(n))
        expect(page.locator("#save-status")).to_contain_text(f"Saved: {n % 5 + 1}")
    assert Assessment.objects.count() == 10

    press(page, "p")  # back to the last rating, and change it
    expect(page.locator("#revisit")).to_be_visible()
    press(page, "1")
    expect(page.locator("#save-status")).to_contain_text("Saved: 1")
    assert Assessment.objects.count() == 10
    assert JudgementChange.objects.filter(judgement="assessment").count() == 11
    press(page, "s")  # skip: the text goes back, another comes
    expect(page.locator("#save-status")).to_contain_text("Skipped")
    shot(page, "assessment-skipped")

    researcher = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    log_in(researcher, base, "researcher", DEMO_PASSWORD)
    researcher.goto(f"{base}/studies/{study.pk}/progress/")
    expect(researcher.locator("#assessment-count")).to_have_text("10")
    researcher.goto(f"{base}/studies/{study.pk}/reports/judge-vs-human/")
    alpha = researcher.locator("table[data-table=judge_human_alpha]")
    expect(alpha).to_contain_text("collected in this study")
    expect(alpha).to_contain_text("imported")
    consistency = researcher.locator("table[data-table=human_alpha]")
    expect(consistency).to_contain_text("collected in this study")
    shot(researcher, "judge-vs-human-collected")
    researcher.context.close()


def test_control_items_are_mixed_in_unannounced_and_flag_a_careless_annotator(
    page, live_server, study
):
    """The researcher adds control items and a rate; the annotator vets by keyboard without
    being told which were controls; the researcher sees their accuracy, flagged."""
    from apps.annotation.models import ControlServe
    from apps.corpus.models import Perturbation

    base = live_server.url
    golds = list(Perturbation.objects.filter(item__dataset__studies=study).order_by("pk")[:3])
    log_in(page, base, "researcher", DEMO_PASSWORD)
    page.goto(f"{base}/studies/{study.pk}/")
    page.click("text=Control items")
    page.wait_for_url(f"**/studies/{study.pk}/controls/")
    for gold in golds:
        form = page.locator("#control-add")
        form.locator("select[name=work]").select_option("vetting")
        form.locator("input[name=perturbation]").fill(str(gold.pk))
        form.locator("input[name=answer]").fill("invalid")
        form.locator("button[type=submit]").click()
        expect(page.locator(".flash, .messages").first).to_contain_text("Control item added")
    expect(page.locator("#controls tbody tr")).to_have_count(3)
    settings = page.locator("#control-settings")
    settings.locator("input[name=control_every]").fill("2")
    settings.locator("input[name=control_threshold]").fill("80")
    settings.locator("button[type=submit]").click()
    expect(page.locator("input[name=control_every]")).to_have_value("2")
    shot(page, "controls")

    page.context.clear_cookies()
    log_in(page, base, "annotator", DEMO_PASSWORD)
    page.goto(f"{base}/studies/{study.pk}/vet/")
    for n in range(1, 9):
        expect(page.locator("body")).not_to_contain_text("control")
        press(page, "1")  # valid, every time: wrong on the controls
        expect(page.locator("#my-count")).to_have_text(str(n))
    served = ControlServe.objects.filter(study=study, annotator__username="annotator").count()
    assert served >= 2

    page.context.clear_cookies()
    log_in(page, base, "researcher", DEMO_PASSWORD)
    page.goto(f"{base}/studies/{study.pk}/progress/")
    row = page.locator("#control-accuracy tbody tr", has_text="annotator")
    expect(row).to_contain_text("below threshold")
    expect(row.locator("td").nth(1)).to_have_text(str(served))
    expect(row.locator("td").nth(3)).to_have_text("0.00")
    shot(page, "controls-accuracy")
