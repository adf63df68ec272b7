"""The audit pages and API (docs/audit.md): plan from the study page, read the estimate before
starting, follow and stop the battery; nobody but the owner reaches an audit."""

from __future__ import annotations

import pytest
from django.urls import reverse

from apps.judging.models import AuditStatus, Judge, JudgeAudit, JudgeRun
from tests.factories import UserFactory
from tests.judging.conftest import llm_judge, strategy

pytestmark = pytest.mark.django_db
SINGLE = "cd-zero-shot"


@pytest.fixture
def study(demo):
    demo.vetted_only_default = False
    demo.save()
    return demo


def test_a_researcher_plans_reads_the_estimate_starts_and_cancels(
    client, study, fake_openai_server
):
    judge = llm_judge(fake_openai_server, user=study.owner)
    bleu = Judge.objects.get(metric="bleu")
    client.force_login(study.owner)
    page = client.get(f"/studies/{study.pk}/").content.decode()
    assert f"/judging/audits/new/?study={study.pk}" in page
    form = client.get(f"/judging/audits/new/?study={study.pk}")
    assert form.status_code == 200 and judge.name in form.content.decode()
    answer = client.post(
        f"/judging/audits/new/?study={study.pk}",
        {
            f"judge_{judge.pk}": strategy(SINGLE).pk,
            f"judge_{bleu.pk}": "metric",
            "search_budget": 10,
        },
    )
    audit = JudgeAudit.objects.get()
    assert answer.status_code == 302 and answer["Location"] == f"/judging/audits/{audit.pk}/"
    detail = client.get(answer["Location"]).content.decode()
    assert f'id="estimate-calls">{audit.estimate["calls"]}<' in detail
    assert 'id="audit-start"' in detail
    assert "skipped: metric judges have no pairwise mode" in detail
    for subject in audit.subjects.all():  # each judge's report card is a click away
        assert reverse("audit-card", args=[audit.pk, subject.pk]) in detail
    assert reverse("audit-compare", args=[audit.pk]) in detail
    client.post(f"/judging/audits/{audit.pk}/start/")
    audit.refresh_from_db()
    assert audit.status == AuditStatus.RUNNING
    live = client.get(f"/judging/audits/{audit.pk}/", HTTP_HX_REQUEST="true").content.decode()
    assert 'id="audit-cancel"' in live and "<h1>" not in live
    client.post(f"/judging/audits/{audit.pk}/cancel/")
    audit.refresh_from_db()
    assert audit.status == AuditStatus.CANCELLED
    runs = JudgeRun.objects.filter(label__startswith=f"audit {audit.pk}:")
    assert runs.exists() and set(runs.values_list("status", flat=True)) == {"cancelled"}
    assert 'id="audit-resume"' in client.get(f"/judging/audits/{audit.pk}/").content.decode()
    assert audit.label in client.get("/judging/audits/").content.decode()


def test_nobody_else_reaches_an_audit_nor_plans_on_anothers_study(
    client, study, fake_openai_server
):
    judge = llm_judge(fake_openai_server, user=study.owner)
    client.force_login(study.owner)
    client.post(
        f"/judging/audits/new/?study={study.pk}",
        {f"judge_{judge.pk}": strategy(SINGLE).pk, "search_budget": 10},
    )
    audit = JudgeAudit.objects.get()
    other = UserFactory(username="olga", role="researcher")
    client.force_login(other)
    assert client.get(f"/judging/audits/{audit.pk}/").status_code == 404
    assert client.post(f"/judging/audits/{audit.pk}/cancel/").status_code == 404
    assert client.get(f"/judging/audits/new/?study={study.pk}").status_code == 404
    assert audit.label not in client.get("/judging/audits/").content.decode()
    assert client.get(f"/api/v1/judge-audits/{audit.pk}/").status_code == 404


def test_the_api_plans_with_the_estimate_then_starts_cancels_and_resumes(
    api_client, study, fake_openai_server
):
    judge = llm_judge(fake_openai_server, user=study.owner)
    api_client.force_authenticate(study.owner)
    answer = api_client.post(
        "/api/v1/judge-audits/",
        {"study": study.pk, "subjects": [{"judge": judge.pk, "strategy": strategy(SINGLE).pk}]},
        format="json",
    )
    assert answer.status_code == 201, answer.json()
    body = answer.json()
    assert body["status"] == "pending" and body["estimate"]["calls"] > 0
    parts = {p["part"]: p for p in body["subjects"][0]["parts"]}
    assert parts["human_agreement"]["skipped_reason"] == "no human ratings in this study"
    url = f"/api/v1/judge-audits/{body['id']}/"
    assert api_client.post(url + "start/").json()["status"] == "running"
    progress = api_client.get(url).json()["progress"]
    assert progress["total"] == body["estimate"]["calls"]
    assert api_client.post(url + "cancel/").json()["status"] == "cancelled"
    assert api_client.post(url + "resume/").json()["status"] == "running"
    refused = api_client.post(
        "/api/v1/judge-audits/",
        {
            "study": study.pk,
            "subjects": [{"judge": judge.pk, "strategy": strategy("fbi-pairwise-vanilla").pk}],
        },
        format="json",
    )
    assert refused.status_code == 400 and "strategies" in refused.json()


def test_the_audit_page_says_what_its_runs_left_out_and_the_form_can_take_unvetted_texts(
    client, demo
):
    demo.vetted_only_default = True
    demo.save()
    bleu = Judge.objects.get(metric="bleu")
    client.force_login(demo.owner)
    form = client.get(f"/judging/audits/new/?study={demo.pk}").content.decode()
    checkbox = form.split('name="vetted_only"')[1].split(">")[0]
    assert "checked" in checkbox  # the study's default
    vetted = client.post(
        f"/judging/audits/new/?study={demo.pk}",
        {f"judge_{bleu.pk}": "metric", "search_budget": 10, "vetted_only": "on"},
    )
    detail = client.get(vetted["Location"]).content.decode()
    run = JudgeRun.objects.get(label__startswith="audit ")
    assert run.vetted_only and run.problems
    assert 'id="audit-left-out"' in detail and "not vetted" in detail
    everything = client.post(
        f"/judging/audits/new/?study={demo.pk}",
        {f"judge_{bleu.pk}": "metric", "search_budget": 10},
    )
    second = JudgeAudit.objects.get(pk=int(everything["Location"].rstrip("/").split("/")[-1]))
    unvetted = JudgeRun.objects.get(label__startswith=f"audit {second.pk}:")
    assert not unvetted.vetted_only and unvetted.total > run.total
    assert 'id="audit-left-out"' not in client.get(everything["Location"]).content.decode()


def test_an_audit_above_the_studys_limit_starts_only_when_confirmed(
    client, api_client, study, fake_openai_server
):
    """Page, API and command line alike: the estimate first, then a confirmation above the
    study's limit of HTTP requests."""
    from django.core.management import call_command
    from django.core.management.base import CommandError
    from rest_framework.authtoken.models import Token

    study.confirm_above_requests = 5
    study.save()
    judge = llm_judge(fake_openai_server, user=study.owner)
    client.force_login(study.owner)
    planned = client.post(
        f"/judging/audits/new/?study={study.pk}",
        {f"judge_{judge.pk}": strategy(SINGLE).pk, "search_budget": 10},
    )
    assert planned.status_code == 302, planned.content.decode()[-3000:]
    audit = JudgeAudit.objects.get()
    assert audit.estimate["http_calls"] > 5
    detail = client.get(f"/judging/audits/{audit.pk}/").content.decode()
    assert 'name="confirm"' in detail and "above this study's limit" in detail
    refused = client.post(f"/judging/audits/{audit.pk}/start/", follow=True).content.decode()
    assert "above the limit of 5: confirm to start it" in refused
    audit.refresh_from_db()
    assert audit.status == AuditStatus.PENDING
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=study.owner)}")
    answer = api_client.post(f"/api/v1/judge-audits/{audit.pk}/start/", format="json")
    assert answer.status_code == 400 and "confirm" in answer.json()
    with pytest.raises(CommandError, match="--yes confirms"):
        call_command(
            "judge_audit", "--owner", study.owner.username, "--study", str(study.pk),
            "--judge", f"{judge.pk}:{SINGLE}",
        )  # fmt: skip
    client.post(f"/judging/audits/{audit.pk}/start/", {"confirm": "1"})
    audit.refresh_from_db()
    assert audit.status == AuditStatus.RUNNING
    assert fake_openai_server.request_count == 0  # queued for the workers, none sent here


def test_an_audit_that_would_measure_nothing_says_so_and_offers_the_fix(
    client, demo, fake_openai_server
):
    """The demo's perturbations are not vetted: the battery would judge the originals alone.
    The page says so, Start needs an insistence, and one click plans it over every one."""
    judge = llm_judge(fake_openai_server, user=demo.owner)
    client.force_login(demo.owner)
    choice = {f"judge_{judge.pk}": strategy(SINGLE).pk, "search_budget": 10, "vetted_only": "on"}
    client.post(f"/judging/audits/new/?study={demo.pk}", choice)
    audit = JudgeAudit.objects.get()
    assert "14 not vetted" in audit.estimate["nothing"] and audit.estimate["http_calls"] > 0
    page = client.get(f"/judging/audits/{audit.pk}/").content.decode()
    assert 'id="estimate-nothing"' in page and "This audit would measure nothing" in page
    assert "that measure nothing" in page  # the box to insist
    client.post(f"/judging/audits/{audit.pk}/start/")  # not insisted: nothing starts
    audit.refresh_from_db()
    assert audit.status == AuditStatus.PENDING and fake_openai_server.request_count == 0
    fixed = client.post(f"/judging/audits/{audit.pk}/all/")
    again = JudgeAudit.objects.get()
    assert fixed["Location"] == f"/judging/audits/{again.pk}/" and again.pk != audit.pk
    assert again.estimate["nothing"] == "" and again.estimate["http_calls"] > 0
    assert not JudgeRun.objects.filter(label__startswith=f"audit {audit.pk}:").exists()
    page = client.get(fixed["Location"]).content.decode()
    assert 'id="estimate-nothing"' not in page


def test_the_command_line_says_an_audit_would_measure_nothing(demo, fake_openai_server):
    from io import StringIO

    from django.core.management import call_command

    judge = llm_judge(fake_openai_server, user=demo.owner)
    out = StringIO()
    call_command(
        "judge_audit",
        f"--owner={demo.owner.username}",
        f"--study={demo.pk}",
        f"--judge={judge.pk}:{SINGLE}",
        "--dry-run",
        stdout=out,
    )
    assert "measures nothing: every perturbation is left out (14 not vetted" in out.getvalue()
    assert not JudgeAudit.objects.exists()
