"""`manage.py judge_audit` with a real Celery worker: it prints the estimate, starts the
battery, waits for the end and writes the same JSON as the audit's page (docs/audit.md)."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from apps.judging.models import AuditStatus, Judge, JudgeAudit
from tests.judging.conftest import llm_judge, strategy

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_the_command_audits_waits_and_writes_the_pages_json(
    celery_worker, demo, fake_openai_server, tmp_path, capsys
):
    demo.vetted_only_default = False
    demo.save()
    judge = llm_judge(fake_openai_server, user=demo.owner)
    bleu = Judge.objects.get(metric="bleu")
    out = tmp_path / "audit.json"
    call_command(
        "judge_audit",
        "--owner", demo.owner.username,
        "--study", str(demo.pk),
        "--judge", f"{judge.pk}:{strategy('cd-zero-shot').pk}",
        "--judge", str(bleu.pk),
        "--wait", "--timeout", "240",
        "--json", str(out),
    )  # fmt: skip
    printed = capsys.readouterr().out
    audit = JudgeAudit.objects.get()
    assert f"audit {audit.pk}: {audit.estimate['calls']} calls" in printed
    assert "metric judges have no pairwise mode" in printed
    assert audit.status == AuditStatus.DONE, audit.error
    progress = audit.progress()
    assert progress["done"] + progress["failed"] == progress["total"] > 0
    assert progress["http_requests"] == fake_openai_server.request_count > 0
    written = json.loads(out.read_text())
    assert [c["subject"]["id"] for c in written["cards"]] == list(
        audit.subjects.order_by("id").values_list("id", flat=True)
    )
    client = Client()
    client.force_login(demo.owner)
    page = client.get(reverse("audit-json", args=[audit.pk]))
    assert page.status_code == 200
    assert json.loads(page.content) == written  # the command writes what the page serves
    assert page.content.decode() == out.read_text()  # byte for byte


def test_waiting_with_no_worker_says_where_the_calls_run(
    demo, monkeypatch, tmp_path, capsys, settings
):
    """No worker takes the audit's tasks: --wait says, once, that the calls run on the Celery
    workers and how to start one, then gives up at --timeout with the audit's status."""
    import uuid

    import redis
    from django.core.management.base import CommandError

    from apps.analysis.management.commands import judge_audit
    from workers.celery import app

    queue = f"nobody-{uuid.uuid4().hex[:8]}"  # a queue no worker reads
    monkeypatch.setitem(app.conf, "task_default_queue", queue)
    monkeypatch.setattr(judge_audit, "IDLE_HINT_S", 0.5)
    bleu = Judge.objects.get(metric="bleu")
    try:
        with pytest.raises(CommandError, match="still running after 3"):
            call_command(
                "judge_audit",
                "--owner", demo.owner.username,
                "--study", str(demo.pk),
                "--judge", str(bleu.pk),
                "--wait", "--timeout", "3",
            )  # fmt: skip
    finally:
        broker = redis.Redis.from_url(settings.CELERY_BROKER_URL)
        broker.delete(queue, f"{queue}-metrics")
    printed = capsys.readouterr().out
    assert printed.count("is one running? (`make demo` starts them") == 1


@pytest.mark.django_db
def test_judges_and_strategies_by_name_a_dry_run_keeps_nothing_and_errors_list_the_choices(
    demo, fake_openai_server, capsys
):
    from django.core.management.base import CommandError

    judge = llm_judge(fake_openai_server, user=demo.owner, name="local judge")
    with pytest.raises(CommandError) as error:
        call_command(
            "judge_audit", "--owner", demo.owner.username, "--study", str(demo.pk),
            "--judge", "local judge:cd-zero",
        )  # fmt: skip
    assert "no strategy 'cd-zero'" in str(error.value)
    assert f"{strategy('cd-zero-shot').pk} (cd-zero-shot)" in str(error.value)
    with pytest.raises(CommandError) as error:
        call_command(
            "judge_audit", "--owner", demo.owner.username, "--study", str(demo.pk),
            "--judge", "nobody",
        )  # fmt: skip
    assert "no judge 'nobody'" in str(error.value) and f"{judge.pk} (local judge)" in str(
        error.value
    )
    call_command(
        "judge_audit", "--owner", demo.owner.username, "--study", str(demo.pk),
        "--judge", "local judge:cd-zero-shot", "--judge", "BLEU", "--dry-run",
    )  # fmt: skip
    printed = capsys.readouterr().out
    assert "HTTP requests" in printed and "dry run: nothing was started or kept" in printed
    assert not JudgeAudit.objects.exists() and fake_openai_server.request_count == 0
