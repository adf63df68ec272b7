"""A run's plan: which calls exist, identified once each, and what was left out and why."""

import pytest

from apps.catalog.models import Metric, PerturbationKind
from apps.corpus.models import Perturbation, SourceItem
from apps.judging.models import Judge, JudgeCall
from apps.judging.services import judge_run_plan
from tests.judging.conftest import new_run

pytestmark = pytest.mark.django_db
ITEMS, PERTURBATIONS = 6, 14


def _plan(run):
    run = judge_run_plan(run_id=run.pk)
    return run, JudgeCall.objects.filter(run=run)


def test_single_text_calls_cover_texts_criteria_and_samples(demo, criteria, fake_openai_server):
    from tests.judging.conftest import llm_judge

    judge = llm_judge(fake_openai_server)
    chosen = criteria("fluency", "coherence")
    run, calls = _plan(new_run(demo, judge, "hu-analyze-rate", criteria=chosen))
    samples = run.strategy.samples
    assert run.total == calls.count() == (ITEMS + PERTURBATIONS) * 2 * samples
    assert calls.filter(perturbation=None).count() == ITEMS * 2 * samples
    assert set(calls.values_list("sample_index", flat=True)) == set(range(samples))
    assert calls.exclude(original_first=None).count() == 0
    assert set(calls.values_list("parse_status", flat=True)) == {"pending"}
    again, _ = _plan(run)  # planning twice adds nothing
    assert again.total == run.total == JudgeCall.objects.filter(run=run).count()


def test_selection_by_kind_item_and_originals(demo, criteria, fake_openai_server):
    from tests.judging.conftest import llm_judge

    judge = llm_judge(fake_openai_server)
    negation = PerturbationKind.objects.get(slug="negation")
    item = SourceItem.objects.filter(dataset__name="Demo news summaries").order_by("id").first()
    _, calls = _plan(
        new_run(
            demo,
            judge,
            "fbi-single-vanilla",
            criteria=criteria("overall"),
            kinds=[negation],
            include_originals=False,
        )
    )
    assert calls.count() == Perturbation.objects.filter(kind=negation).count()
    assert not calls.filter(perturbation=None).exists()
    _, calls = _plan(
        new_run(
            demo,
            judge,
            "fbi-single-vanilla",
            criteria=criteria("overall"),
            item_ids=[item.pk],
            include_perturbations=False,
        )
    )
    assert list(calls.values_list("item_id", "perturbation_id")) == [(item.pk, None)]


def test_pairwise_plans_both_orders_for_perturbations_only(demo, criteria, fake_openai_server):
    from tests.judging.conftest import llm_judge

    judge = llm_judge(fake_openai_server)
    run, calls = _plan(new_run(demo, judge, "fbi-pairwise-vanilla", criteria=criteria("overall")))
    assert calls.count() == PERTURBATIONS * 2
    assert calls.filter(original_first=True).count() == calls.filter(original_first=False).count()
    assert not calls.filter(perturbation=None).exists()
    assert run.problems == [
        {"reason": "pairwise strategies judge perturbations, not originals", "count": ITEMS}
    ]


def test_misleading_cue_judges_originals_with_expert_ratings(demo, fake_openai_server):
    from tests.judging.conftest import llm_judge

    items = list(SourceItem.objects.filter(dataset__name="Demo news summaries").order_by("id"))
    for item in items[:2]:
        item.metadata = {"expert_ratings": {"coherence": [4, 4, 5]}}
        item.save()
    coherence = Metric.objects.get(task__slug="summarization", slug="coherence")
    run, calls = _plan(
        new_run(demo, llm_judge(fake_openai_server), "cd-misleading-cue", metrics=[coherence])
    )
    assert sorted(calls.values_list("item_id", flat=True)) == [items[0].pk, items[1].pk]
    reasons = {p["reason"]: p["count"] for p in run.problems}
    assert reasons["no three expert ratings in metadata['expert_ratings']"] == ITEMS - 2
    assert reasons["the misleading cue needs expert ratings, which rate originals"] == 14


def test_metric_judge_plans_one_call_per_text(demo):
    _, calls = _plan(new_run(demo, Judge.objects.get(name="BLEU")))
    assert calls.count() == ITEMS + PERTURBATIONS
    assert not calls.exclude(criterion=None).exists() and not calls.exclude(metric=None).exists()


def test_nothing_to_judge_fails_the_run_with_a_reason(demo):
    run = new_run(
        demo, Judge.objects.get(name="chrF"), include_originals=False, include_perturbations=False
    )
    run, _ = _plan(run)
    assert run.status == "failed" and "nothing to judge" in run.error


def test_a_prompt_that_names_no_quality_is_asked_once_per_text(demo, fake_openai_server):
    # fbi-single-vanilla judges the answer as a whole: four metrics would be four identical
    # questions (four identical Wilcoxon tests, n four times too large). One call per text.
    from tests.judging.conftest import llm_judge

    metrics = list(Metric.objects.filter(task__slug="summarization"))
    assert len(metrics) == 4
    run, calls = _plan(
        new_run(demo, llm_judge(fake_openai_server), "fbi-single-vanilla", metrics=metrics)
    )
    assert run.strategy.names_quality is False
    assert run.total == calls.count() == ITEMS + PERTURBATIONS
    assert not calls.exclude(metric=None).exists() and not calls.exclude(criterion=None).exists()
    # a prompt that names the metric is asked once per metric
    run, calls = _plan(
        new_run(demo, llm_judge(fake_openai_server), "cd-zero-shot", metrics=metrics)
    )
    assert run.strategy.names_quality is True
    assert calls.count() == (ITEMS + PERTURBATIONS) * 4


def test_task_metrics_apply_only_to_items_of_their_task(demo, fake_openai_server):
    from apps.catalog.models import Task
    from tests.judging.conftest import llm_judge

    items = list(SourceItem.objects.filter(dataset__name="Demo news summaries").order_by("id"))
    paraphrase = Task.objects.get(slug="paraphrase")
    SourceItem.objects.filter(pk=items[0].pk).update(task=paraphrase)
    coherence = Metric.objects.get(task__slug="summarization", slug="coherence")
    meaning = Metric.objects.get(task=paraphrase, slug="meaning-preservation")
    run, calls = _plan(
        new_run(
            demo,
            llm_judge(fake_openai_server),
            "cd-zero-shot",
            metrics=[coherence, meaning],
            include_perturbations=False,
        )
    )
    asked = set(calls.values_list("item_id", "metric__slug"))
    assert asked == {(items[0].pk, "meaning-preservation")} | {
        (item.pk, "coherence") for item in items[1:]
    }
    reasons = {p["reason"]: p["count"] for p in run.problems}
    assert reasons["a task metric applies only to items of its task"] == ITEMS


def test_a_run_without_the_metric_in_its_prompt_is_analysed_as_one_test(demo, fake_openai_server):
    # planned, worked against the local server and analysed: one question per text, and the
    # reliability report combines one p-value per kind (M = 1), over the kind's texts
    from apps.analysis.reports import judge_reliability
    from tests.judging.conftest import llm_judge, work

    metrics = list(Metric.objects.filter(task__slug="summarization"))
    run = work(
        new_run(demo, llm_judge(fake_openai_server), "fbi-single-explained", metrics=metrics)
    )
    assert run.calls.filter(parse_status="parsed").count() == ITEMS + PERTURBATIONS
    assert fake_openai_server.request_count <= ITEMS + PERTURBATIONS
    table = next(t for t in judge_reliability.build(run).tables() if t.name == "discernment")
    rows = [dict(zip(table.columns, row, strict=True)) for row in table.rows]
    assert rows and all(row["M"] == 1 for row in rows)
    per_kind = Perturbation.objects.filter(item__dataset__studies=demo)  # kinds by name
    counts = {name: per_kind.filter(kind__name=name).count() for name in {r["kind"] for r in rows}}
    assert {row["kind"]: row["n"] for row in rows} == counts
