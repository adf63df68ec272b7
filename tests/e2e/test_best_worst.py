"""Best-worst scaling in a real browser, on each database: two annotators answer SPEC §10's
hand case by keyboard (three tuples of five texts a-e: best a worst d; best b worst e; best a
worst d), and the researcher's human agreement report shows the counting scores a 2/3, b 1/2,
c 0, d -1, e -1/2 and the split-half reliability (1: both annotators answered alike)."""

import pytest
from playwright.sync_api import Page, expect

from apps.annotation.models.best_worst import BestWorst, BestWorstTuple
from apps.annotation.services import study_plan_build
from tests.annotation.factories import study_setup
from tests.conftest import ARTIFACTS
from tests.e2e.screens import log_in, overflow, press
from tests.factories import PerturbationFactory, SourceItemFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

#: SPEC §10's tuples, and the best and worst of each.
HAND_CASE = [("abcd", "a", "d"), ("abce", "b", "e"), ("acde", "a", "d")]


def hand_case_study():
    """One item whose original is text a and whose perturbations are b-e, answered under one
    criterion by two annotators; its tuples are SPEC's three (set in place of the design)."""
    setup = study_setup(perturbations=0, annotators=2, aspects=1, prefix="bw")
    study = setup.study
    item = SourceItemFactory(
        dataset=study.datasets.get(), source="The council met on Tuesday.", original="Text a."
    )
    texts = {"a": None}
    for letter in "bcde":
        texts[letter] = PerturbationFactory(
            item=item, kind=setup.kinds[0], text=f"Text {letter}."
        ).pk
    study.best_worst_criteria.set(setup.criteria)
    study.best_worst_size, study.best_worst_overlap = 4, 2
    study.save()
    study_plan_build(study=study)
    BestWorstTuple.objects.filter(study=study).delete()
    for number, (letters, _, _) in enumerate(HAND_CASE, start=1):
        BestWorstTuple.objects.create(
            study=study,
            item=item,
            criterion=setup.criteria[0],
            number=number,
            texts=[texts[letter] for letter in letters],
            position=number,
        )
    study_plan_build(study=study)  # the same texts: the tuples stay, and get their slots
    setup.letters = {pk: letter for letter, pk in texts.items()}
    return setup


def answer_by_keyboard(page: Page) -> None:
    """Answer the tuple shown as the hand case says: its number keys, then Enter."""
    shown = [
        page.locator(f"#text-{n} .pane").inner_text().strip()[-2] for n in range(1, 5)
    ]  # "Text a." -> "a"
    _, best, worst = next(case for case in HAND_CASE if set(case[0]) == set(shown))
    press(page, str(shown.index(best) + 1))
    expect(page.locator("#pick-worst")).to_have_class("scale is-active")
    press(page, str(shown.index(worst) + 1))
    press(page, "Enter")


def test_two_annotators_answer_the_hand_case_by_keyboard(page, live_server, browser):
    setup = hand_case_study()
    study = setup.study
    base = live_server.url
    for n, person in enumerate(setup.annotators):
        context = browser.new_context(viewport={"width": 1280 if n == 0 else 390, "height": 900})
        tab = context.new_page()
        log_in(tab, base, person.username)
        tab.goto(f"{base}/studies/{study.pk}/")
        tab.click("text=Pick best and worst")
        tab.wait_for_url(f"**/studies/{study.pk}/best-worst/")
        expect(tab.locator("#criterion")).to_contain_text("summary")
        for done in range(1, 4):
            if done == 1:
                tab.screenshot(path=str(ARTIFACTS / f"best-worst-{n}.png"), full_page=True)
                assert overflow(tab) == 0
            answer_by_keyboard(tab)
            expect(tab.locator("#my-count")).to_have_text(str(done))
            expect(tab.locator("#save-status")).to_contain_text("Saved: best text")
        expect(tab.locator("#no-work")).to_be_visible()
        context.close()
    answers = BestWorst.objects.filter(study=study).select_related("unit")
    assert answers.count() == 6
    for saved in answers:  # as the hand case says, whatever the order the texts were shown in
        letters = [setup.letters[text] for text in saved.unit.texts]
        case = HAND_CASE[saved.unit.number - 1]
        assert (letters[saved.best], letters[saved.worst]) == case[1:]

    log_in(page, base, study.owner.username)
    page.goto(f"{base}/studies/{study.pk}/reports/human-agreement/")
    scores = page.locator("table[data-table=bws_scores] tbody tr")
    expect(scores).to_have_count(5)
    by_text = {}
    for row in scores.all():
        cells = [cell.inner_text().strip() for cell in row.locator("td").all()]
        by_text[cells[2]] = float(cells[-1])  # the text ("original" or its id), its score
    letter_of = {
        ("original" if pk is None else str(pk)): letter for pk, letter in setup.letters.items()
    }
    assert {letter_of[text]: score for text, score in by_text.items()} == pytest.approx(
        {"a": 2 / 3, "b": 1 / 2, "c": 0, "d": -1, "e": -1 / 2}, abs=0.001
    )
    reliability = page.locator("table[data-table=bws_reliability] tbody tr")
    expect(reliability).to_have_count(1)
    cells = [cell.inner_text().strip() for cell in reliability.locator("td").all()]
    assert cells[1:4] == ["5", "6", "2"]  # texts, answers, annotators
    # rho [95% interval], over splits; Spearman-Brown [interval], over splits; 100 splits
    assert cells[4:10] == ["1 [1, 1]", "1", "1", "1 [1, 1]", "1", "1"]
    assert cells[-3:] == ["100", "0", ""]
    page.screenshot(path=str(ARTIFACTS / "best-worst-report.png"), full_page=True)
