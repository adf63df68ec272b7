"""A researcher sets up an adversarial search on the page (an LLM generator and gold judge on
the local fake server, BLEU as the victim), watches each item's trajectory fill in while the
real Celery worker searches, and finds the final texts among the dataset's perturbations."""

import pytest

from apps.annotation.demo import DEMO_PASSWORD, demo_load
from apps.judging.loading import judging_load
from apps.judging.models import AdversarialSearch
from tests.fakes.fixtures import fake_openai_server  # noqa: F401  (a fixture)
from tests.judging.scripted_search import scripted_world

pytestmark = [pytest.mark.e2e, pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_researcher_runs_a_search_against_bleu_and_watches_it(
    page,
    live_server,
    catalog,
    celery_worker,
    fake_openai_server,  # noqa: F811
):
    study = demo_load()
    judging_load()
    world = scripted_world(study, fake_openai_server, items=2)
    page.goto(f"{live_server.url}/judging/searches/new/")
    page.fill("input[name=username]", "researcher")
    page.fill("input[name=password]", DEMO_PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url("**/judging/searches/new/")
    page.select_option("select[name=dataset]", label="scripted")
    page.select_option("select[name=generator]", label="generator")
    page.select_option("select[name=victim]", label="BLEU")
    page.check(f"input[name=gold][value='{world.gold.pk}']")  # gold judges are checkboxes
    page.select_option("select[name=criterion]", value=str(world.criterion.pk))
    page.fill("input[name=target_score]", "50")
    page.fill("input[name=max_iterations]", "3")
    page.fill("input[name=candidates_per_iteration]", "2")
    page.fill("input[name=label]", "BLEU under attack")
    page.click("text=Set up the search")
    page.wait_for_url("**/judging/searches/*/")
    assert page.locator("#search-status").inner_text() == "not started"
    page.click("#start-search")  # BLEU is computed here: the estimate's requests are the LLMs'
    page.wait_for_url("**/judging/searches/*/")
    page.locator("#search-status", has_text="Done").wait_for(timeout=90_000)
    items = page.locator("#search-items tbody tr")
    assert items.count() == 4  # two items, AdvEval and the rule baseline
    assert page.locator("#search-items tbody tr", has_text="AdvEval").count() == 2
    assert page.locator("#trajectory tbody tr").count() >= 3  # R0 and two candidates at least
    assert "level 0" in page.locator("#trajectory tbody tr").first.inner_text()
    page.locator("#search-items a", has_text="s1").first.click()
    page.wait_for_url("**/judging/searches/*/?item=*")
    assert "Trajectory of s1" in page.locator("#search-live h2", has_text="Trajectory").inner_text()
    search = AdversarialSearch.objects.get(label="BLEU under attack")
    assert search.status == "done" and search.created_by.username == "researcher"
    assert search.items.filter(method="adveval", perturbation__isnull=False).count() == 2


def test_a_search_whose_generator_writes_no_candidate_reads_no_result(
    page,
    live_server,
    catalog,
    celery_worker,
    fake_openai_server,  # noqa: F811
):
    """The generator never writes a <RES> block: the page says "no result" with the count of
    unreadable replies, lists every iteration and unfolds each raw reply; the study's report
    shows no attack success rate, not 0. Both pages fit a 1280 px window."""
    from apps.analysis.reports import adversarial
    from tests.conftest import ARTIFACTS
    from tests.e2e.screens import overflow
    from tests.judging.scripted_search import scripted_reply

    def stubborn(request):
        if request.get("model") == "generator-model":
            return "I will not use tags."
        return scripted_reply(request)

    study = demo_load()
    judging_load()
    world = scripted_world(study, fake_openai_server, items=2)
    fake_openai_server.reply = stubborn
    study.datasets.add(world.dataset)
    search = world.create(
        start=True, study=study, max_iterations=3, rule_baseline=True, label="nothing read"
    )
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{live_server.url}/judging/searches/{search.pk}/")
    page.fill("input[name=username]", "researcher")
    page.fill("input[name=password]", DEMO_PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"**/judging/searches/{search.pk}/")
    page.locator("#search-status", has_text="Done").wait_for(timeout=90_000)
    header = page.locator("#no-result-adveval").inner_text()
    assert "2 of 2 items ended with no result: 12 of 12 generator replies held no candidate" in (
        header
    )
    assert page.locator("#generator-unparsed").inner_text() == "12 of 12"
    adveval = page.locator("#search-items tbody tr", has_text="AdvEval")
    assert adveval.count() == 2
    assert "Done: iteration limit" not in adveval.first.inner_text()
    assert "No result: 6 of 6 generator replies held no candidate" in adveval.first.inner_text()
    assert page.locator("#trajectory tr.no-candidate").count() == 3  # iterations 1, 2 and 3
    reply = page.locator("#iteration-2 details").first
    assert not reply.locator("pre").is_visible()
    reply.locator("summary").click()
    assert reply.locator("pre").inner_text() == "I will not use tags."
    assert overflow(page) == 0
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "search-no-result.png"), full_page=True)

    report = adversarial.build(study)
    adveval, _rules = next(t for t in report.tables() if t.name == "attack_success").rows
    assert adveval[4:9] == [None, None, None, 0, 2]  # AdvEval: no rate, N 0, 2 with no result
    page.goto(f"{live_server.url}/studies/{study.pk}/reports/adversarial-search/")
    assert (
        "its attack success rate is unknown, not 0" in page.locator(".report-warnings").inner_text()
    )
    shown = page.locator("table[data-table=attack_success]").inner_text()
    assert "Attack success rate" in shown and "Adveval" not in shown
    assert overflow(page) == 0
    page.screenshot(path=str(ARTIFACTS / "search-no-result-report.png"), full_page=True)
