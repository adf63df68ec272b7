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
    page.select_option("select[name=gold]", label="gold")
    page.select_option("select[name=criterion]", label=world.criterion.key)
    page.fill("input[name=target_score]", "50")
    page.fill("input[name=max_iterations]", "3")
    page.fill("input[name=candidates_per_iteration]", "2")
    page.fill("input[name=label]", "BLEU under attack")
    page.click("text=Start the search")
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
