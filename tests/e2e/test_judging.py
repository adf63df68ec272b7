"""A researcher starts a metric-judge run on the demo study from the page, watches it
complete (htmx progress, the real Celery worker) and sees the scores, choosing every
perturbation rather than the default vetted ones."""

import pytest

from apps.annotation.demo import DEMO_PASSWORD, demo_load
from apps.judging.loading import judging_load
from apps.judging.models import JudgeRun
from tests.fakes.fixtures import fake_openai_server as fake_openai_server  # the shared fixture

pytestmark = [pytest.mark.e2e, pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_researcher_runs_bleu_on_the_demo_and_sees_scores(
    page, live_server, catalog, celery_worker
):
    study = demo_load()
    judging_load()
    page.goto(f"{live_server.url}/judging/runs/new/")
    page.fill("input[name=username]", "researcher")
    page.fill("input[name=password]", DEMO_PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url("**/judging/runs/new/")
    assert page.locator("#run-form [data-applies-to=llm]").is_visible()
    page.select_option("select[name=judge]", label="BLEU")
    assert page.locator("#run-form [data-applies-to=llm]").is_hidden()  # no strategy, criteria
    page.select_option("select[name=study]", label=study.name)
    page.fill("input[name=label]", "BLEU on the demo")
    # vetted perturbations are the default; the demo has none vetted, so choose all
    assert page.locator("input[name=vetted_only][value=true]").is_checked()
    page.check("input[name=vetted_only][value=false]")
    page.click("text=Start the run")
    page.wait_for_url("**/judging/runs/*/")
    page.locator("#run-status", has_text="Done").wait_for(timeout=60_000)
    assert page.locator("#done").inner_text() == "20"
    assert page.locator("#failed").inner_text() == "0"
    scores = page.locator("#scores tbody tr")
    assert scores.count() == 20
    originals = page.locator("#scores tbody tr", has_text="original")
    assert originals.count() == 6
    assert set(originals.locator("td.score").all_inner_texts()) == {"100.00"}
    assert page.locator("text=Download CSV").is_visible()
    run = JudgeRun.objects.get(label="BLEU on the demo")
    assert run.created_by.username == "researcher" and run.status == "done"


@pytest.mark.django_db(transaction=True)
def test_researcher_tests_a_connection_then_starts_an_estimated_run(
    page, live_server, catalog, fake_openai_server
):
    """Test connection works before the judge has a name (the browser does not block it), and
    an LLM judge's run shows its estimate and waits for Start."""
    study = demo_load()
    judging_load()
    page.goto(f"{live_server.url}/judging/judges/new/")
    page.fill("input[name=username]", "researcher")
    page.fill("input[name=password]", DEMO_PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url("**/judging/judges/new/")
    page.click("#server-presets button:has-text('OpenAI')")  # a preset fills the address
    assert page.input_value("input[name=base_url]") == "https://api.openai.com/v1"
    assert page.input_value("select[name=max_tokens_param]") == "max_completion_tokens"
    page.click("#server-presets button:has-text('vLLM')")
    assert page.input_value("input[name=base_url]") == "http://127.0.0.1:8000/v1"
    assert page.input_value("select[name=max_tokens_param]") == "max_tokens"
    page.fill("input[name=base_url]", fake_openai_server.base_url)
    page.fill("input[name=model]", "judge-model")
    page.click("#test-connection")
    page.wait_for_selector("#connection-test")
    assert "Connected" in page.inner_text("#connection-test")
    assert fake_openai_server.request_count == 1
    page.fill("input[name=name]", "local judge")
    page.click("main form button[type=submit]:has-text('Save')")
    page.wait_for_url("**/judging/judges/")
    page.goto(f"{live_server.url}/judging/runs/new/")
    page.select_option("select[name=judge]", label="local judge")
    page.select_option("select[name=study]", label=study.name)
    strategies = page.locator("select[name=strategy] option").all_inner_texts()
    page.select_option("select[name=strategy]", label=next(s for s in strategies if "vanilla" in s))
    page.check("input[name=vetted_only][value=false]")
    page.click("#run-form button[type=submit]")
    page.wait_for_selector("#run-estimate")
    calls = int(page.inner_text("#estimate-http").replace(",", ""))
    assert calls > 0 and page.inner_text("#run-status") == "not started"
    assert fake_openai_server.request_count == 1  # the test call only
    run = JudgeRun.objects.get(label="")
    assert run.status == "pending"
