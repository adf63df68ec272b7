"""Judge audits (docs/audit.md): the battery planned per judge family and per state of the
data, the estimate before it starts, cancel and resume as one, and a second audit of the same
judge served from the cache (0 HTTP requests), worked in this process as the worker does."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError

from apps.analysis.models import HumanRating
from apps.corpus.models import SourceItem
from apps.judging.adversarial.finals import adversarial_kind
from apps.judging.audit_selectors import audit_parts
from apps.judging.models import (
    AuditStatus,
    Judge,
    JudgeAudit,
    JudgeCall,
    JudgeRun,
    PartKind,
    RunStatus,
)
from apps.judging.services import adversarial_search_work, judge_run_work
from apps.judging.services.audits import (
    audit_cancel,
    audit_plan,
    audit_refresh,
    audit_resume,
    audit_start,
)
from tests.factories import PerturbationFactory, StudyFactory
from tests.judging.conftest import llm_judge, strategy
from tests.judging.scripted_search import scripted_reply

pytestmark = pytest.mark.django_db
#: A single-score strategy naming its criterion, one sample a text (keeps the tests small).
SINGLE = "cd-zero-shot"


@pytest.fixture
def study(demo):
    demo.vetted_only_default = False  # nobody vetted the demo's perturbations
    demo.save()
    return demo


def parts_of(audit) -> dict[str, object]:
    return {p.part: p for p in audit_parts(audit)}


def work_all(audit) -> None:
    """Work every run and search of a started audit here, as the worker tasks would."""
    for part in audit_parts(audit):
        for run in (part.run, part.baseline):
            if run is not None:
                run.refresh_from_db()
                if run.status == RunStatus.RUNNING:
                    judge_run_work(run_id=run.pk)
        if part.search is not None:
            adversarial_search_work(search_id=part.search.pk)
    audit_refresh(audit)
    audit.refresh_from_db()


def test_an_llm_judge_gets_the_whole_battery_where_the_data_allows(study, fake_openai_server):
    judge = llm_judge(fake_openai_server)
    audit = audit_plan(owner=study.owner, study=study, subjects=[(judge, strategy(SINGLE))])
    parts = parts_of(audit)
    assert list(parts) == PartKind.values  # every part, in battery order
    single = parts["fbi_single"].run
    assert single.strategy.slug == SINGLE and single.total > 0
    assert parts["aspect_deltas"].run == single
    assert parts["discernment"].run is not None  # the task's metrics
    assert parts["fbi_pairwise"].run.strategy.slug == "fbi-pairwise-vanilla"
    assert not parts["fbi_pairwise"].run.include_originals
    assert parts["fbi_reference"].run.strategy.slug == "fbi-reference"
    assert parts["human_agreement"].skipped_reason == "no human ratings in this study"
    assert "expert ratings" in parts["misleading_cue"].skipped_reason
    assert "generator" in parts["adversarial"].skipped_reason
    assert audit.status == AuditStatus.PENDING
    assert JudgeRun.objects.filter(status=RunStatus.PENDING).count() >= 4  # nothing queued


def test_a_metric_judge_is_spared_what_it_cannot_do(study):
    bleu = Judge.objects.get(metric="bleu")
    audit = audit_plan(owner=study.owner, study=study, subjects=[(bleu, None)])
    parts = parts_of(audit)
    assert parts["fbi_single"].run.strategy is None and parts["fbi_single"].run.total > 0
    assert parts["discernment"].run == parts["fbi_single"].run
    assert parts["fbi_pairwise"].skipped_reason == "metric judges have no pairwise mode"
    assert "reference" in parts["fbi_reference"].skipped_reason
    assert parts["misleading_cue"].skipped_reason == "metric judges read no prompt"
    assert "per aspect" in parts["aspect_deltas"].skipped_reason
    assert audit.estimate["calls"] == parts["fbi_single"].run.total
    assert audit.estimate["http_calls"] == 0 and audit.estimate["cost_usd"] == 0


def test_an_empty_study_skips_every_part_and_says_why(demo, researcher, fake_openai_server):
    empty = StudyFactory(owner=researcher)
    judge = llm_judge(fake_openai_server, user=researcher)
    audit = audit_plan(owner=researcher, study=empty, subjects=[(judge, strategy(SINGLE))])
    assert {p.skipped_reason for p in audit_parts(audit)} == {"the study has no items"}
    assert audit.estimate["calls"] == 0
    assert not JudgeRun.objects.exists()


def test_human_ratings_and_expert_ratings_add_their_parts(study, fake_openai_server):
    item = SourceItem.objects.filter(dataset__studies=study).first()
    HumanRating.objects.create(
        item=item, criterion_name="coherence", rater="r1", score=4, scale_min=1, scale_max=5
    )
    for each in SourceItem.objects.filter(dataset__studies=study):
        each.metadata = {"expert_ratings": {c.aspect.slug: [4, 4, 5] for c in study.criteria.all()}}
        each.save()
    judge = llm_judge(fake_openai_server)
    audit = audit_plan(owner=study.owner, study=study, subjects=[(judge, strategy(SINGLE))])
    parts = parts_of(audit)
    assert parts["human_agreement"].run == parts["fbi_single"].run
    cue = parts["misleading_cue"]
    assert cue.run.strategy.slug == "cd-misleading-cue"
    assert cue.baseline.strategy.slug == "cd-knowledge"
    assert not cue.run.include_perturbations


def test_bad_choices_are_refused_by_name(study, fake_openai_server):
    judge = llm_judge(fake_openai_server)
    with pytest.raises(ValidationError) as refused:
        audit_plan(
            owner=study.owner, study=study, subjects=[(judge, strategy("fbi-pairwise-vanilla"))]
        )
    assert "strategies" in refused.value.message_dict
    with pytest.raises(ValidationError) as refused:
        audit_plan(owner=study.owner, subjects=[(judge, strategy(SINGLE))])
    assert "data" in refused.value.message_dict
    assert not JudgeAudit.objects.exists()


def test_the_estimate_counts_calls_cache_hits_tokens_and_cost(study, fake_openai_server):
    judge = llm_judge(fake_openai_server)
    Judge.objects.filter(pk=judge.pk).update(
        price_per_million_prompt_tokens=Decimal("1000"),
        price_per_million_completion_tokens=Decimal("2000"),
    )
    judge.refresh_from_db()
    audit = audit_plan(owner=study.owner, study=study, subjects=[(judge, strategy(SINGLE))])
    estimate = audit.estimate
    runs = {p.run for p in audit_parts(audit) if p.run}
    assert estimate["calls"] == sum(r.total for r in runs)
    assert estimate["cached_calls"] + estimate["http_calls"] == estimate["calls"]
    assert 0 < estimate["http_calls"] <= estimate["calls"]
    keys = {c for r in runs for c in JudgeCall.objects.filter(run=r).values_list("pk", flat=True)}
    assert len(keys) == estimate["calls"]
    assert estimate["prompt_tokens"] > 0 and estimate["completion_tokens"] > 0
    expected = (estimate["prompt_tokens"] * 1 + estimate["completion_tokens"] * 2) / 1000
    assert estimate["cost_usd"] == pytest.approx(expected, rel=1e-3)
    # no prices: the cost is unknown, and the estimate says so
    free = llm_judge(fake_openai_server)
    other = audit_plan(owner=study.owner, study=study, subjects=[(free, strategy(SINGLE))])
    assert other.estimate["cost_usd"] is None
    assert any("cost unknown" in note for note in other.estimate["notes"])


def test_the_estimate_is_within_a_quarter_of_the_requests_then_sent(study, fake_openai_server):
    """The whole battery of an LLM judge (single scores, pairwise both orders, reference-guided,
    the misleading cue, aspect-targeted deltas): the HTTP requests the estimate said against
    what the model server then counted."""
    judge = llm_judge(fake_openai_server)
    audit = audit_plan(owner=study.owner, study=study, subjects=[(judge, strategy(SINGLE))])
    estimated = audit.estimate["http_calls"]
    audit_start(audit=audit, confirmed=True)
    work_all(audit)
    audit.refresh_from_db()
    assert audit.status == AuditStatus.DONE, audit.error
    sent = fake_openai_server.request_count
    assert estimated > 0 and abs(sent - estimated) <= 0.25 * estimated, (sent, estimated)


def test_a_second_audit_of_the_same_judge_makes_no_http_request(study, fake_openai_server):
    fake_openai_server.reply = scripted_reply
    judge = llm_judge(fake_openai_server, model="victim-model")
    gold = llm_judge(fake_openai_server, name="gold", model="gold-model")
    generator = llm_judge(fake_openai_server, name="generator", model="generator-model")
    subjects = [(judge, strategy("adveval-0-100"))]
    options = {"search_budget": 5, "generator": generator.endpoint, "gold_judge": gold}
    first = audit_plan(owner=study.owner, study=study, subjects=subjects, **options)
    assert parts_of(first)["adversarial"].search is not None
    audit_start(audit=first, confirmed=True)
    work_all(first)
    assert first.status == AuditStatus.DONE, [
        (
            p.part,
            p.run and (p.run.status, p.run.error),
            p.search and (p.search.status, p.search.error),
        )
        for p in audit_parts(first)
    ]
    asked = fake_openai_server.request_count
    assert asked > 0 and first.progress()["http_requests"] > 0

    # as a successful search does: its texts join the study under the adversarial kind; a
    # later audit judges the data as it was (the audit's own search reads those texts)
    kind = adversarial_kind("R-")
    PerturbationFactory(item=SourceItem.objects.filter(dataset__studies=study).first(), kind=kind)
    study.kinds.add(kind)
    second = audit_plan(owner=study.owner, study=study, subjects=subjects, **options)
    assert second.estimate["http_calls"] == 0
    assert second.estimate["cached_calls"] == second.estimate["calls"] > 0
    audit_start(audit=second, confirmed=True)
    work_all(second)
    assert second.status == AuditStatus.DONE, second.error
    assert fake_openai_server.request_count == asked  # not one more request
    progress = second.progress()
    assert progress["http_requests"] == 0 and progress["cached"] == progress["done"] > 0


def test_cancel_and_resume_act_on_the_whole_battery(study, fake_openai_server):
    judge = llm_judge(fake_openai_server)
    audit = audit_plan(owner=study.owner, study=study, subjects=[(judge, strategy(SINGLE))])
    runs = {p.run for p in audit_parts(audit) if p.run}
    audit_start(audit=audit, confirmed=True)
    assert {r.status for r in JudgeRun.objects.filter(pk__in=[r.pk for r in runs])} == {"running"}
    audit = audit_cancel(audit=audit)
    assert audit.status == AuditStatus.CANCELLED
    assert {r.status for r in JudgeRun.objects.filter(pk__in=[r.pk for r in runs])} == {"cancelled"}
    audit = audit_resume(audit=audit)
    assert audit.status == AuditStatus.RUNNING
    assert {r.status for r in JudgeRun.objects.filter(pk__in=[r.pk for r in runs])} == {"running"}
    work_all(audit)
    assert audit.status == AuditStatus.DONE
    progress = audit.progress()
    assert progress["done"] == progress["total"] == sum(r.total for r in runs)


def test_the_audit_fails_with_the_reason_when_a_part_fails(study, fake_openai_server):
    judge = llm_judge(fake_openai_server)
    audit = audit_plan(owner=study.owner, study=study, subjects=[(judge, strategy(SINGLE))])
    audit_start(audit=audit, confirmed=True)
    runs = sorted({p.run.pk for p in audit_parts(audit) if p.run})
    JudgeRun.objects.filter(pk=runs[0]).update(status="failed", error="the endpoint is gone")
    JudgeRun.objects.filter(pk__in=runs[1:]).update(status="done")
    audit = audit_refresh(audit)
    assert audit.status == AuditStatus.FAILED
    assert "the endpoint is gone" in audit.error


def test_a_dataset_is_audited_on_its_tasks_metrics(study, fake_openai_server):
    dataset = study.datasets.get()
    judge = llm_judge(fake_openai_server)
    audit = audit_plan(owner=study.owner, dataset=dataset, subjects=[(judge, strategy(SINGLE))])
    parts = parts_of(audit)
    single = parts["fbi_single"].run
    assert single.dataset == dataset and single.study is None and not single.vetted_only
    assert single.metrics.exists() and not single.criteria.exists()
    assert parts["aspect_deltas"].skipped_reason == "aspect deltas need criteria (a study's)"
    assert parts["human_agreement"].skipped_reason == "no human ratings in this dataset"
    HumanRating.objects.create(
        item=dataset.items.first(), criterion_name="coherence", rater="r1", score=4,
        scale_min=1, scale_max=5,
    )  # fmt: skip
    again = audit_plan(owner=study.owner, dataset=dataset, subjects=[(judge, strategy(SINGLE))])
    assert parts_of(again)["human_agreement"].run == parts_of(again)["fbi_single"].run
