"""Judging pages and API: roles, run creation from the page, live progress, downloads."""

import csv
import io
import json

import pytest
from rest_framework.authtoken.models import Token

from apps.judging.models import Judge, JudgeRun, Strategy
from apps.judging.services import STRATEGY_FIELDS, strategy_create
from tests.factories import UserFactory
from tests.judging.conftest import new_run, strategy, work

pytestmark = pytest.mark.django_db
PAGES = ["/judging/", "/judging/runs/new/", "/judging/judges/", "/judging/strategies/"]


@pytest.fixture
def queued(monkeypatch):
    from workers.tasks import judging

    sent: list[tuple] = []

    def record(run_id: int, share: int | None = None, *, metric: bool = False) -> None:
        sent.append((run_id,) if share is None else (run_id, share))

    monkeypatch.setattr(judging, "queue_run_work", record)
    return sent


def own_copy(shipped: Strategy, user) -> Strategy:
    """A researcher's own strategy made from a shipped one (shipped ones are read-only)."""
    fields = {name: getattr(shipped, name) for name in STRATEGY_FIELDS}
    return strategy_create(slug=f"{shipped.slug}-mine", user=user, **fields)


@pytest.fixture
def bleu_run(demo):
    return work(new_run(demo, Judge.objects.get(name="BLEU")))


def test_annotators_reach_no_judging_page_or_endpoint(client, api_client, annotator, bleu_run):
    client.force_login(annotator)
    for url in [*PAGES, f"/judging/runs/{bleu_run.pk}/", f"/judging/runs/{bleu_run.pk}/calls.csv"]:
        assert client.get(url).status_code == 403, url
    api_client.force_authenticate(annotator)
    for url in [
        "/api/v1/judge-runs/",
        "/api/v1/judges/",
        "/api/v1/strategies/",
        f"/api/v1/judge-runs/{bleu_run.pk}/",
    ]:
        assert api_client.get(url).status_code == 403, url


def test_a_researcher_sees_only_their_own_runs(client, api_client, bleu_run):
    other = UserFactory(username="olga", role="researcher")
    client.force_login(other)
    assert client.get(f"/judging/runs/{bleu_run.pk}/").status_code == 404
    assert client.get(f"/judging/runs/{bleu_run.pk}/calls.jsonl").status_code == 404
    assert client.post(f"/judging/runs/{bleu_run.pk}/cancel/").status_code == 404
    assert b"BLEU" not in client.get("/judging/").content
    api_client.force_authenticate(other)
    assert api_client.get(f"/api/v1/judge-runs/{bleu_run.pk}/").status_code == 404
    assert api_client.get("/api/v1/judge-runs/").json()["count"] == 0
    client.force_login(bleu_run.created_by)
    assert b"BLEU" in client.get("/judging/").content


def test_starting_a_metric_run_from_the_page(
    client, demo, queued, django_capture_on_commit_callbacks
):
    client.force_login(demo.owner)
    assert client.get("/judging/runs/new/").status_code == 200
    bleu = Judge.objects.get(name="BLEU")
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/judging/runs/new/",
            {
                "judge": bleu.pk,
                "study": demo.pk,
                "include_originals": "on",
                "include_perturbations": "on",
                "label": "BLEU on the demo",
            },
        )
    run = JudgeRun.objects.get(label="BLEU on the demo")
    assert response.status_code == 302 and response["Location"] == f"/judging/runs/{run.pk}/"
    assert queued == [(run.pk,)] and run.status == "running"
    page = client.get(f"/judging/runs/{run.pk}/", HTTP_HX_REQUEST="true")
    assert b"<html" not in page.content and b'hx-trigger="every 1s"' in page.content
    work(run)
    page = client.get(f"/judging/runs/{run.pk}/")
    html = page.content.decode()
    assert 'id="run-status" class="status-done">Done' in html and 'id="scores"' in html
    assert "100.00" in html and "hx-trigger" not in html  # finished: polling stops


def test_the_form_explains_what_a_run_needs(client, demo, fake_openai_server):
    from tests.judging.conftest import llm_judge

    client.force_login(demo.owner)
    judge = llm_judge(fake_openai_server)
    page = client.post("/judging/runs/new/", {"judge": judge.pk, "study": demo.pk})
    assert page.status_code == 200 and b"an LLM judge needs a strategy" in page.content
    page = client.post("/judging/runs/new/", {"judge": Judge.objects.get(name="chrF").pk})
    assert b"choose a study or a dataset" in page.content
    assert not JudgeRun.objects.exists()


def test_progress_partial_shows_counters_rate_tokens_and_cost(
    client, demo, fake_openai_server, criteria
):
    from tests.judging.conftest import llm_judge

    judge = llm_judge(
        fake_openai_server,
        price_per_million_prompt_tokens="500",
        price_per_million_completion_tokens="1500",
    )
    run = work(
        new_run(
            demo,
            judge,
            "fbi-single-axis",
            criteria=criteria("overall"),
            include_perturbations=False,
        )
    )
    client.force_login(demo.owner)
    html = client.get(f"/judging/runs/{run.pk}/", HTTP_HX_REQUEST="true").content.decode()
    for figure in ("done", "failed", "cached", "unscored", "rate", "http", "tokens", "cost"):
        assert f'id="{figure}"' in html
    assert f'<dd id="done">{run.done}</dd>' in html
    expected = (run.prompt_tokens * 0.5 + run.completion_tokens * 1.5) / 1000
    assert f"{expected:.4f}" in html


def test_run_downloads_have_one_row_per_call(client, bleu_run):
    client.force_login(bleu_run.created_by)
    response = client.get(f"/judging/runs/{bleu_run.pk}/calls.csv")
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert len(rows) == bleu_run.total == 20
    assert {r["parse_status"] for r in rows} == {"parsed"}
    assert {r["score"] for r in rows if not r["perturbation"]} == {"100.0"}
    response = client.get(f"/judging/runs/{bleu_run.pk}/calls.jsonl")
    lines = b"".join(response.streaming_content).decode().splitlines()
    first = json.loads(lines[0])
    assert len(lines) == 20 and first["judge"] == "BLEU" and first["request"]["metric"] == "bleu"
    assert client.get(f"/judging/runs/{bleu_run.pk}/calls.xml").status_code == 404


def test_run_list_queries_do_not_grow_with_runs(client, demo, django_assert_max_num_queries):
    client.force_login(demo.owner)
    bleu = Judge.objects.get(name="BLEU")
    new_run(demo, bleu)
    with django_assert_max_num_queries(6) as few:
        client.get("/judging/")
    for _ in range(5):
        new_run(demo, bleu)
    with django_assert_max_num_queries(len(few)):
        client.get("/judging/")


def test_cancel_resume_and_run_again_from_the_page(
    client, demo, queued, django_capture_on_commit_callbacks
):
    run = new_run(demo, Judge.objects.get(name="ROUGE-L"))
    client.force_login(demo.owner)
    client.post(f"/judging/runs/{run.pk}/cancel/")
    assert JudgeRun.objects.get(pk=run.pk).status == "cancelled"
    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"/judging/runs/{run.pk}/resume/")
    assert JudgeRun.objects.get(pk=run.pk).status == "running" and queued == [(run.pk,)]
    work(run)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/judging/runs/{run.pk}/again/")
    again = JudgeRun.objects.exclude(pk=run.pk).get()
    assert response["Location"] == f"/judging/runs/{again.pk}/"
    assert again.judge == run.judge and queued[-1] == (again.pk,)


def test_judges_and_strategy_versions_from_the_pages(client, demo):
    client.force_login(demo.owner)
    response = client.post(
        "/judging/judges/new/",
        {
            "name": "local llama",
            "kind": "llm",
            "base_url": "http://127.0.0.1:11434/v1",
            "api_key_env": "",
            "model": "llama3.1:8b",
            "default_params": "{}",
            "max_concurrency": 4,
            "timeout_s": 60,
            "max_attempts": 5,
            "max_tokens_param": "max_tokens",
        },
    )
    assert response.status_code == 302
    assert Judge.objects.get(name="local llama").created_by == demo.owner
    shipped = strategy("fbi-single-vanilla")
    assert client.get(f"/judging/strategies/{shipped.pk}/revise/").status_code == 404
    assert b"read-only" in client.get(f"/judging/strategies/{shipped.pk}/").content
    vanilla = own_copy(shipped, demo.owner)
    page = client.get(f"/judging/strategies/{vanilla.pk}/revise/")
    form = page.context["form"]
    data = {name: form[name].value() for name in form.fields}
    data = {k: ("" if v is None else v) for k, v in data.items() if v is not False}
    data["examples"] = "[]"
    data["scale_max"] = 3
    data["note"] = "1-3 scale"
    response = client.post(f"/judging/strategies/{vanilla.pk}/revise/", data)
    assert response.status_code == 302, response.context["form"].errors
    newest = Strategy.objects.filter(slug=vanilla.slug).latest("version")
    assert (newest.version, newest.scale_max, newest.note) == (2, 3, "1-3 scale")
    assert Strategy.objects.get(pk=vanilla.pk).scale_max == 5
    assert b"v2" in client.get(f"/judging/strategies/{newest.pk}/").content


def test_api_runs_strategies_and_judges(api_client, demo, queued):
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=demo.owner)}")
    bleu = Judge.objects.get(name="BLEU")
    response = api_client.post(
        "/api/v1/judge-runs/", {"judge": bleu.pk, "study": demo.pk}, format="json"
    )
    assert response.status_code == 201, response.json()
    run = work(JudgeRun.objects.get(pk=response.json()["id"]))
    detail = api_client.get(f"/api/v1/judge-runs/{run.pk}/").json()
    # by default only vetted perturbations: the demo has none vetted, so its 6 originals
    assert detail["vetted_only"] is True
    assert (detail["status"], detail["done"], detail["total"]) == ("done", 6, 6)
    assert [p["count"] for p in detail["problems"] if "not vetted" in p["reason"]] == [14]
    calls = api_client.get(f"/api/v1/judge-runs/{run.pk}/calls/").json()
    assert calls["count"] == 6 and calls["results"][0]["parse_status"] == "parsed"
    assert api_client.get(f"/api/v1/judge-runs/{run.pk}/failures/").json() == {
        "errors": [],
        "unparsed": [],
    }
    export = api_client.get(f"/api/v1/judge-runs/{run.pk}/export/?file_format=csv")
    assert export.status_code == 200 and export["Content-Type"] == "text/csv"
    bad = api_client.post("/api/v1/judge-runs/", {"judge": bleu.pk}, format="json")
    assert bad.status_code == 400 and "dataset" in bad.json()

    listed = api_client.get("/api/v1/strategies/?limit=100").json()
    assert listed["count"] == Strategy.objects.values("slug").distinct().count()
    shipped = strategy("fbi-single-vanilla")
    refused = api_client.post(f"/api/v1/strategies/{shipped.pk}/revise/", {"samples": 3})
    assert refused.status_code == 404
    vanilla = own_copy(shipped, demo.owner)
    revised = api_client.post(
        f"/api/v1/strategies/{vanilla.pk}/revise/",
        {"samples": 3, "note": "three samples"},
        format="json",
    )
    assert revised.status_code == 201 and revised.json()["version"] == 2
    assert revised.json()["prompt_template"] == vanilla.prompt_template

    judge = api_client.post(
        "/api/v1/judges/",
        {"name": "j", "base_url": "http://h/v1", "model": "m", "default_params": {"n": 2}},
        format="json",
    )
    assert judge.status_code == 400 and "default_params" in judge.json()


def test_a_run_whose_every_call_failed_shows_failed_with_the_reason(
    client, demo, fake_openai_server, criteria
):
    from tests.fakes.openai_server import Fault
    from tests.judging.conftest import llm_judge

    body = '{"error": {"message": "The model is overloaded"}}'
    fake_openai_server.add_rule(lambda request: True, Fault.json_body(body))
    run = work(
        new_run(
            demo,
            llm_judge(fake_openai_server),
            "fbi-single-vanilla",
            criteria=criteria("overall"),
            include_perturbations=False,
        )
    )
    client.force_login(demo.owner)
    html = client.get(f"/judging/runs/{run.pk}/").content.decode()
    assert 'class="status-failed">Failed</strong>' in html
    assert "The run failed: every call failed (6)" in html
    assert "the provider answered with an error: The model is overloaded" in html


def test_the_strategy_form_explains_every_placeholder(client, demo):
    """The researcher writing a template sees each placeholder and what it is filled with on
    the page itself (not a pointer to a file of the repository)."""
    client.force_login(demo.owner)
    body = client.get("/judging/strategies/new/").content.decode()
    assert "<code>{{expert_rating}}</code>" in body
    assert "misleading cue: the rating PR claimed to come from a human expert" in body
    assert body.count("<tr><td><code>{{") == 14  # one row each
    assert "docs/" not in body


def test_the_judge_page_speaks_plainly_and_its_sampling_fields_make_the_defaults(client, demo):
    client.force_login(demo.owner)
    page = client.get("/judging/judges/new/").content.decode()
    assert 'name="default_params"' not in page and "multiple" not in page  # no raw widgets
    for label in ("Server address (base URL)", "Key variable", "Timeout (seconds)"):
        assert label in page
    assert "Api key env" not in page and "Base url" not in page
    assert '<option value="http://127.0.0.1:11434/v1">Ollama on this machine</option>' in page
    client.post(
        "/judging/judges/new/",
        {
            "name": "plain",
            "kind": "llm",
            "base_url": "http://127.0.0.1:11434/v1",
            "model": "llama3.1:8b",
            "temperature": "0.3",
            "stop": "###, END",
        },
    )
    endpoint = Judge.objects.get(name="plain").endpoint
    assert endpoint.default_params == {"temperature": 0.3, "stop": ["###", "END"]}
    page = client.get(f"/judging/judges/{Judge.objects.get(name='plain').pk}/").content.decode()
    assert 'value="###, END"' in page and 'value="0.3"' in page
