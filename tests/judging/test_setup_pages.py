"""The set-up pages of judging and corpus (issue 37): no Ctrl-click lists, no JSON boxes, no
slug as a label; what they post still makes the run or strategy the services expect."""

import re

import pytest

from apps.catalog.models import Criterion, Metric, PerturbationKind
from apps.judging.models import Judge, JudgeRun, Strategy
from tests.judging.conftest import llm_judge, strategy

pytestmark = pytest.mark.django_db

PAGES = [
    "/judging/runs/new/",
    "/judging/searches/new/",
    "/judging/audits/new/",
    "/judging/judges/new/",
    "/judging/judges/import/",
    "/judging/strategies/new/",
    "/generate/",
    "/imports/new/",
    "/catalog/criteria/import/",
]
SLUG = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)+$")
LABEL_TEXT = re.compile(r"<(label|legend|summary)[^>]*>([^<]*)")
JSON_BOX = re.compile(r"<textarea[^>]*>\s*[\[{]")


def label_texts(html: str) -> list[str]:
    """The words each label, legend and summary begins with."""
    return [text.strip() for _, text in LABEL_TEXT.findall(html) if text.strip()]


def assert_readable(html: str, url: str) -> None:
    assert "<select multiple" not in html and " multiple>" not in html, url
    assert 'name="examples"' not in html, url
    assert not JSON_BOX.search(html), url
    slugs = [text for text in label_texts(html) if SLUG.match(text)]
    assert not slugs, (url, slugs)


def test_the_set_up_pages_read_plainly_with_nothing_yet(client, researcher, catalog):
    client.force_login(researcher)
    for url in PAGES:
        response = client.get(url)
        assert response.status_code == 200, url
        assert_readable(response.content.decode(), url)


def test_the_set_up_pages_read_plainly_with_data(client, demo, fake_openai_server):
    llm_judge(fake_openai_server, name="Local judge", user=demo.owner)
    client.force_login(demo.owner)
    for url in [*PAGES, f"/judging/audits/new/?study={demo.pk}"]:
        response = client.get(url)
        assert response.status_code == 200, url
        assert_readable(response.content.decode(), url)
    revise = client.get(f"/judging/strategies/{strategy('fbi-single-vanilla').pk}/revise/")
    assert_readable(revise.content.decode(), "revise")


def test_the_run_form_shows_choices_as_checkboxes_and_samples(client, demo):
    client.force_login(demo.owner)
    html = client.get("/judging/runs/new/").content.decode()
    for name in ("criteria", "metrics", "kinds"):
        assert f'type="checkbox" name="{name}"' in html, name
    assert "<details" in html and 'data-applies-to="llm"' in html
    assert 'data-kind="metric"' in html  # the judge's options say their kind
    analyze = Strategy.objects.filter(family="analyze-rate").first()
    if analyze is not None:
        assert f"— {analyze.samples} sample" in html


def test_a_run_posted_with_checkboxes_has_the_chosen_selection(client, demo, fake_openai_server):
    judge = llm_judge(fake_openai_server, name="Local judge", user=demo.owner)
    client.force_login(demo.owner)
    criteria = list(Criterion.objects.filter(source="discern")[:2])
    metric = Metric.objects.first()
    kinds = list(PerturbationKind.objects.all()[:3])
    response = client.post(
        "/judging/runs/new/",
        {
            "judge": judge.pk,
            "strategy": strategy("fbi-single-vanilla").pk,
            "study": demo.pk,
            "criteria": [c.pk for c in criteria],
            "metrics": [metric.pk],
            "kinds": [k.pk for k in kinds],
            "include_originals": "on",
            "include_perturbations": "on",
            "vetted_only": "false",
        },
    )
    assert response.status_code == 302, response.context["form"].errors
    run = JudgeRun.objects.get()
    assert set(run.criteria.all()) == set(criteria)
    assert list(run.metrics.all()) == [metric]
    assert set(run.kinds.all()) == set(kinds)


def test_a_metric_run_ignores_the_llm_fields_it_was_sent(client, demo):
    client.force_login(demo.owner)
    response = client.post(
        "/judging/runs/new/",
        {
            "judge": Judge.objects.get(name="BLEU").pk,
            "strategy": strategy("fbi-single-vanilla").pk,  # hidden for a metric judge
            "criteria": [Criterion.objects.first().pk],
            "study": demo.pk,
            "vetted_only": "false",
        },
    )
    assert response.status_code == 302, response.context["form"].errors
    run = JudgeRun.objects.get()
    assert run.strategy is None and not run.criteria.exists()


def strategy_post(**extra: str) -> dict[str, str]:
    return {
        "slug": "with-examples",
        "name": "With examples",
        "family": "single",
        "prompt_template": "Rate {{examples}} {{text}}",
        "scale_min": "1",
        "scale_max": "5",
        "parser": "score_only",
        "samples": "1",
        "max_tokens": "100",
        "top_logprobs": "10",
        "examples-TOTAL_FORMS": "3",
        "examples-INITIAL_FORMS": "0",
    } | extra


def test_examples_rows_are_saved_as_the_same_json(client, researcher, catalog):
    client.force_login(researcher)
    response = client.post(
        "/judging/strategies/new/",
        strategy_post(
            **{
                "examples-0-source": "A long article.",
                "examples-0-text": "A fine summary.",
                "examples-0-score": "5",
                "examples-0-why": "Complete.",
                "examples-2-text": "A poor one.",
                "examples-2-score": "1.5",
            }
        ),
    )
    assert response.status_code == 302, response.context["form"].errors
    saved = Strategy.objects.get(slug="with-examples")
    assert saved.examples == [
        {"source": "A long article.", "text": "A fine summary.", "score": 5, "why": "Complete."},
        {"source": "", "text": "A poor one.", "score": 1.5, "why": ""},
    ]
    page = client.get(f"/judging/strategies/{saved.pk}/revise/").content.decode()
    assert "A fine summary." in page and 'name="examples-0-text"' in page


def test_a_bad_example_row_is_named_and_nothing_saved(client, researcher, catalog):
    client.force_login(researcher)
    response = client.post(
        "/judging/strategies/new/",
        strategy_post(
            **{
                "examples-0-text": "Good.",
                "examples-0-score": "4",
                "examples-1-text": "No score here.",
                "examples-1-score": "high",
            }
        ),
    )
    assert response.status_code == 200
    assert "Example 2, score: Enter a number." in response.content.decode()
    assert not Strategy.objects.filter(slug="with-examples").exists()


def test_the_api_still_takes_examples_as_json_and_the_page_shows_them_as_rows(
    client, api_client, demo
):
    from tests.judging.test_views import own_copy

    mine = own_copy(strategy("fbi-single-vanilla"), demo.owner)
    api_client.force_authenticate(demo.owner)
    examples = [{"source": "", "text": "Shown as a row.", "score": 3, "why": "Middling."}]
    revised = api_client.post(
        f"/api/v1/strategies/{mine.pk}/revise/", {"examples": examples}, format="json"
    )
    assert revised.status_code == 201, revised.json()
    assert Strategy.objects.get(pk=revised.json()["id"]).examples == examples
    client.force_login(demo.owner)
    page = client.get(f"/judging/strategies/{revised.json()['id']}/revise/").content.decode()
    assert "Shown as a row." in page and 'name="examples-0-score"' in page
    assert 'value="3"' in page
