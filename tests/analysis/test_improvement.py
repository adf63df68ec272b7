"""Improving a judge (docs/improve.md): a planted judge that misses two kinds under its default
prompt and catches them under the rubric gets the rubric recommended, confirmed on texts it
never saw, with the blind spots it closed named; a judge no candidate helps gets "no candidate
beats the current strategy". Requests sent are counted against the estimate, and a second
improvement of the same judge costs none (the cache)."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from apps.analysis.improving.advance import improvement_advance
from apps.analysis.improving.plan import improvement_adopt, improvement_plan, improvement_start
from apps.corpus.models import Perturbation
from apps.judging.loading import judging_load
from apps.judging.models import AuditPart, Improvement, JudgeRun, PartKind, RunStatus, Strategy
from apps.judging.services import judge_run_plan, judge_run_start, judge_run_work
from apps.judging.services.audits import audit_plan
from tests.analysis.builders import council_texts, study_with_items
from tests.factories import UserFactory, llm_judge_save
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.scripted_judges import ScriptedJudges

pytestmark = pytest.mark.django_db

ITEMS = 16
MISSED = {"negation", "word-exchange"}
KINDS = ["negation", "word-exchange", "sentence-exchange", "fbi-score-invariant"]
RUBRIC = "Rubric (use the whole range"  # fbi-single-rubric's prompt, and no other's


def _study():
    study, items, perts = study_with_items(ITEMS, KINDS)
    council_texts(items, perts)
    study.vetted_only_default = False
    study.save()
    return study


def _work(run: JudgeRun) -> None:
    """A run worked here, as a worker does (its task is not queued in these tests)."""
    run.refresh_from_db()
    if run.status == RunStatus.PENDING:
        judge_run_start(run=run)
    judge_run_plan(run_id=run.pk)
    judge_run_work(run_id=run.pk, share=8)


def _audited(server, study, model: str = "careless"):
    """The judge's card: its single-answer run, worked."""
    judge = llm_judge_save(
        user=study.owner,
        name=model,
        base_url=server.base_url,
        model=model,
        max_concurrency=8,
        timeout_s=10.0,
    )
    current = Strategy.objects.filter(slug="cd-zero-shot").latest("version")
    audit = audit_plan(owner=study.owner, study=study, subjects=[(judge, current)])
    subject = audit.subjects.get()
    _work(AuditPart.objects.get(subject=subject, part=PartKind.FBI_SINGLE).run)
    return subject


def _improve(subject, **options) -> Improvement:
    """Plan, start and work an improvement to its end, as the worker would."""
    improvement = improvement_plan(owner=subject.audit.owner, subject=subject, **options)
    improvement_start(improvement=improvement, confirmed=True)
    for _ in range(10):
        for run in improvement.runs():
            if run.status == RunStatus.RUNNING:
                _work(run)
        if not improvement_advance(improvement_id=improvement.pk):
            break
    improvement.refresh_from_db()
    assert improvement.status == RunStatus.DONE, improvement.error
    return improvement


def _estimated(improvement: Improvement, confirmed: bool) -> int:
    estimate = improvement.estimate
    return estimate["whole"]["http_calls"] if confirmed else estimate["training"]["http_calls"]


def test_the_rubric_is_recommended_and_confirmed_on_held_out_texts(catalog):
    judging_load()
    study = _study()
    with FakeOpenAIServer(reply=ScriptedJudges.of(study, MISSED, caught_by=RUBRIC)) as server:
        subject = _audited(server, study)
        before = server.request_count
        improvement = _improve(subject)
        sent = server.request_count - before
        result = improvement.result
        assert result["recommended"], result
        assert result["winner_label"] == "FBI single: rubric"
        assert result["closed"] == ["Negation", "Word exchange"]
        assert result["opened"] == []
        assert result["texts"] == {"train": 8, "held": 8}
        test = result["missed"]["test"]
        assert test["test"] == "McNemar (exact)" and test["p"] < 0.05
        # "fewer errors missed: current minus candidate": positive when the candidate is better
        assert test["difference"] > 0
        assert test["difference"] == pytest.approx(result["missed"]["before"]["value"])
        assert result["missed"]["after"]["value"] == 0
        assert result["headline"].startswith("Adopt FBI single: rubric: it closes Negation")
        # no text of the held-out half was tried on, nor shown as an example
        winner = improvement.candidates.get(pk=result["winner"])
        assert set(winner.train_run.item_ids) == set(improvement.train_items)
        assert not set(improvement.train_items) & set(improvement.held_items)
        few_shot = improvement.candidates.get(origin="few-shot").strategy
        shown = " ".join(e["text"] for e in few_shot.examples)
        held_texts = Perturbation.objects.filter(item_id__in=improvement.held_items)
        assert not any(p.text in shown for p in held_texts)
        estimated = _estimated(improvement, confirmed=True)
        assert abs(sent - estimated) <= 0.25 * estimated, (sent, improvement.estimate)

        again = _improve(subject)  # the same split: every call from the cache
        assert server.request_count - before == sent
        assert again.estimate["training"]["http_calls"] == 0  # (confirmation: an upper bound)
        assert again.result["winner_label"] == result["winner_label"]
    adopted = improvement_adopt(improvement=improvement, user=study.owner)
    assert (
        adopted.created_by == study.owner
        and adopted.prompt_template == winner.strategy.prompt_template
    )
    assert Strategy.objects.filter(slug="cd-zero-shot").exists()  # the old one stays


def test_a_judge_no_candidate_helps_keeps_its_strategy(catalog):
    judging_load()
    study = _study()
    with FakeOpenAIServer(reply=ScriptedJudges.of(study, MISSED)) as server:
        subject = _audited(server, study, "stubborn")
        before = server.request_count
        improvement = _improve(subject)
        sent = server.request_count - before
    result = improvement.result
    assert not result["recommended"]
    assert result["headline"].startswith("No candidate beats the current strategy")
    assert sorted(result["blind_spots"]) == ["Negation", "Word exchange"]
    estimated = _estimated(improvement, confirmed=False)
    assert abs(sent - estimated) <= 0.25 * estimated, (sent, improvement.estimate)
    assert not improvement.candidates.exclude(held_run=None).exclude(origin="current").exists()


def test_the_api_and_the_command_plan_with_the_estimate_first(catalog, api_client, capsys):
    judging_load()
    study = _study()
    with FakeOpenAIServer(reply=ScriptedJudges.of(study, MISSED)) as server:
        subject = _audited(server, study)
        before = server.request_count
        api_client.force_authenticate(study.owner)
        dry = api_client.post(
            "/api/v1/improvements/", {"subject": subject.pk, "dry_run": True}, format="json"
        )
        assert dry.status_code == 200 and dry.json()["estimate"]["training"]["http_calls"] > 0
        assert not Improvement.objects.exists()  # a dry run keeps nothing
        made = api_client.post("/api/v1/improvements/", {"subject": subject.pk}, format="json")
        assert made.status_code == 201
        pk = made.json()["improvement"]["id"]
        refused = api_client.post(f"/api/v1/improvements/{pk}/start/", {}, format="json")
        assert refused.status_code == 400 and "above the limit" in str(refused.json())
        other = UserFactory(role="researcher")
        api_client.force_authenticate(other)
        assert api_client.get(f"/api/v1/improvements/{pk}/").status_code == 404
        assert (
            api_client.post(
                "/api/v1/improvements/", {"subject": subject.pk}, format="json"
            ).status_code
            == 400
        )
        call_command(
            "judge_improve", "--owner", study.owner.username, "--audit",
            str(subject.audit_id), "--dry-run",
        )  # fmt: skip
        said = capsys.readouterr().out
        assert "training (every candidate on the training texts)" in said
        assert "dry run: nothing was started or kept" in said
        assert server.request_count == before  # nothing was sent
    with pytest.raises(CommandError, match="no audit 999999"):
        call_command("judge_improve", "--owner", study.owner.username, "--audit", "999999")


def test_the_command_documents_its_options(capsys):
    with pytest.raises(SystemExit):
        call_command("judge_improve", "--help")
    text = capsys.readouterr().out
    for option in ("--dry-run", "--yes", "--budget", "--json"):
        assert option in text


def test_a_budget_stops_it_with_what_was_learned(catalog):
    judging_load()
    study = _study()
    with FakeOpenAIServer(reply=ScriptedJudges.of(study, MISSED, caught_by=RUBRIC)) as server:
        subject = _audited(server, study)
        improvement = _improve(subject, budget_requests=50)
    result = improvement.result
    assert not result["recommended"] and result["stopped"] == "budget"
    assert result["headline"].startswith("Stopped at the budget of 50 requests")
    assert not improvement.candidates.exclude(held_run=None).exists()  # none confirmed


def test_an_improvement_sent_as_batches_recommends_what_the_live_one_does(catalog, settings):
    from apps.judging.models import Judge
    from apps.judging.services.batches import judge_run_batch_step

    settings.DISCERN_BATCH_POLL_S = 0.0
    judging_load()
    study = _study()
    with FakeOpenAIServer(reply=ScriptedJudges.of(study, MISSED, caught_by=RUBRIC)) as server:
        subject = _audited(server, study)
        Judge.objects.filter(pk=subject.judge_id).update(price_per_million_prompt_tokens=1000)
        subject.judge.endpoint.batch_api = True
        subject.judge.endpoint.save()
        improvement = improvement_plan(owner=study.owner, subject=subject)
        assert improvement.estimate["batch_problem"] == ""
        whole = improvement.estimate["whole"]
        assert float(whole["cost_batch_usd"]) == pytest.approx(float(whole["cost_usd"]) / 2)
        chat_before = server.request_count
        improvement_start(improvement=improvement, confirmed=True, batch=True)
        assert all(run.batch_mode for run in improvement.runs())
        for _ in range(10):
            for run in improvement.runs():
                while run.status == RunStatus.RUNNING and judge_run_batch_step(run_id=run.pk):
                    pass
                run.refresh_from_db()
            if not improvement_advance(improvement_id=improvement.pk):
                break
        improvement.refresh_from_db()
        assert improvement.status == RunStatus.DONE, improvement.error
        assert improvement.result["recommended"]
        assert improvement.result["closed"] == ["Negation", "Word exchange"]
        chat = [r for r in server.requests[chat_before:] if r.path.endswith("/chat/completions")]
        assert not chat and server.batches.created >= 2  # training, then held-out: no live call
