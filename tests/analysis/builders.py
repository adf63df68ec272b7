"""Rows for report tests, made through the real models (annotation and judging)."""

from __future__ import annotations

import uuid

from apps.annotation.models import Comparison, ExpertVote, Vetting
from apps.catalog.models import Criterion, Metric, PerturbationKind, Task
from apps.judging.models import Judge, JudgeCall, JudgeRun
from apps.judging.models.call import call_identity
from tests.factories import (
    DatasetFactory,
    PerturbationFactory,
    SourceItemFactory,
    StudyFactory,
    UserFactory,
    llm_judge_create,
)

CHOICE = {"worse": "A", "better": "B", "same": "C", "uncertain": "D"}  # original shown first


def study_with_items(n_items: int, kinds: list[str]):
    """A study over n summarization items, one perturbation per item and kind."""
    study = StudyFactory(owner=UserFactory(username=f"r-{uuid.uuid4().hex[:6]}", role="researcher"))
    dataset = DatasetFactory()
    study.datasets.add(dataset)
    task = Task.objects.get(slug="summarization")
    perturbations = {k: [] for k in kinds}
    items = []
    for n in range(n_items):
        item = SourceItemFactory(dataset=dataset, external_id=f"i{n}", task=task)
        items.append(item)
        for slug in kinds:
            perturbations[slug].append(
                PerturbationFactory(
                    item=item,
                    kind=PerturbationKind.objects.get(slug=slug),
                    external_id=f"{slug}-{n}",
                    text=f"perturbed {slug} {n}",
                )
            )
    study.kinds.set(PerturbationKind.objects.filter(slug__in=kinds))
    return study, items, perturbations


def annotators(n: int, prefix: str = "ann"):
    return [UserFactory(username=f"{prefix}{i}-{uuid.uuid4().hex[:4]}") for i in range(n)]


def compare(study, perturbation, criterion_key: str, annotator, outcome: str, group: int = 1):
    return Comparison.objects.create(
        study=study,
        perturbation=perturbation,
        criterion=Criterion.objects.get(key=criterion_key),
        annotator=annotator,
        group=group,
        original_first=True,
        choice=CHOICE[outcome],
        outcome=outcome,
    )


def vet(study, perturbation, annotator, verdict: str):
    return Vetting.objects.create(
        study=study, perturbation=perturbation, annotator=annotator, verdict=verdict
    )


def vote(study, kind: str, metric: str, expert, task: str = "summarization"):
    return ExpertVote.objects.create(
        study=study,
        expert=expert,
        task=Task.objects.get(slug=task),
        kind=PerturbationKind.objects.get(slug=kind),
        metric=Metric.objects.get(task__slug=task, slug=metric),
    )


def judge_run(study, name: str = "judge", **fields) -> JudgeRun:
    judge = Judge.objects.create(
        name=f"{name}-{uuid.uuid4().hex[:6]}", kind="metric", metric="bleu"
    )
    fields.setdefault("status", "done")
    return JudgeRun.objects.create(judge=judge, study=study, **fields)


def score(
    run,
    item,
    perturbation,
    value,
    *,
    metric: str | None = None,
    criterion: str | None = None,
    sample: int = 0,
):
    metric_obj = Metric.objects.get(task__slug="summarization", slug=metric) if metric else None
    criterion_obj = Criterion.objects.get(key=criterion) if criterion else None
    identity = call_identity(
        item_id=item.pk,
        perturbation_id=perturbation.pk if perturbation else None,
        criterion_id=criterion_obj.pk if criterion_obj else None,
        metric_id=metric_obj.pk if metric_obj else None,
        sample_index=sample,
        original_first=None,
    )
    return JudgeCall.objects.create(
        run=run,
        identity=identity,
        item=item,
        perturbation=perturbation,
        metric=metric_obj,
        criterion=criterion_obj,
        sample_index=sample,
        request={},
        raw_response=str(value),
        parse_status="parsed" if value is not None else "unparsed",
        score=value,
    )


def strategy_run(study, *, family: str = "single", template: str = "Rate: {{text}}", **fields):
    """A run of an LLM strategy (no endpoint needed: the tests store the calls themselves)."""
    from apps.judging.models import Strategy

    strategy = Strategy.objects.create(
        slug=f"s-{uuid.uuid4().hex[:6]}",
        name="test strategy",
        family=family,
        prompt_template=template,
        parser="pairwise" if family == "pairwise" else "score_only",
        **fields,
    )
    return judge_run(study, strategy=strategy)


def prefer(run, item, perturbation, original_first: bool, preferred: str | None):
    """One pairwise judgement: which text the judge preferred (None: unparsed)."""
    identity = call_identity(
        item_id=item.pk,
        perturbation_id=perturbation.pk,
        criterion_id=None,
        metric_id=None,
        sample_index=0,
        original_first=original_first,
    )
    return JudgeCall.objects.create(
        run=run,
        identity=identity,
        item=item,
        perturbation=perturbation,
        original_first=original_first,
        request={},
        raw_response=str(preferred),
        parse_status="parsed" if preferred else "unparsed",
        preferred=preferred or "",
    )


def llm_run(study, strategy_slug: str, **fields) -> JudgeRun:
    """A run of an LLM judge with the newest shipped version of a strategy (judging_load)."""
    from apps.judging.models import Strategy

    judge = llm_judge_create(
        name=f"llm-{uuid.uuid4().hex[:6]}", base_url="http://127.0.0.1:1", model="m"
    )
    strategy = Strategy.objects.filter(slug=strategy_slug).order_by("-version").first()
    assert strategy is not None, f"no shipped strategy {strategy_slug}"
    fields.setdefault("status", "done")
    return JudgeRun.objects.create(judge=judge, strategy=strategy, study=study, **fields)


def pairwise(run, perturbation, preferred: str | None, *, original_first: bool, criterion: str):
    """One pairwise call: `preferred` is "original", "perturbed", "tie" or None (unparsed)."""
    criterion_obj = Criterion.objects.get(key=criterion)
    first_is_a = {"original": original_first, "perturbed": not original_first}
    verdict = {True: "A", False: "B"}.get(first_is_a.get(preferred or ""), "tie")
    return JudgeCall.objects.create(
        run=run,
        identity=call_identity(
            item_id=perturbation.item_id,
            perturbation_id=perturbation.pk,
            criterion_id=criterion_obj.pk,
            metric_id=None,
            sample_index=0,
            original_first=original_first,
        ),
        item_id=perturbation.item_id,
        perturbation=perturbation,
        criterion=criterion_obj,
        original_first=original_first,
        raw_response=verdict if preferred else "no idea",
        parse_status="parsed" if preferred else "unparsed",
        verdict=verdict if preferred else "",
        preferred=preferred or "",
    )


def rate(item, perturbation, aspect: str, rater: str, value: float, scale=(1.0, 5.0)):
    """An imported human rating of a text on an aspect of the tree."""
    from apps.analysis.models import HumanRating
    from apps.catalog.models import Aspect

    return HumanRating.objects.create(
        item=item,
        perturbation=perturbation,
        criterion_name=aspect,
        aspect=Aspect.objects.get(slug=aspect),
        rater=rater,
        score=value,
        scale_min=scale[0],
        scale_max=scale[1],
    )


def assess(study, item, perturbation, criterion_key: str, annotator, score: int):
    """A rating collected in the study (direct assessment) of a text under a criterion."""
    from apps.annotation.models import Assessment, AssessmentUnit

    criterion = Criterion.objects.get(key=criterion_key)
    unit, _ = AssessmentUnit.objects.get_or_create(
        study=study,
        item=item,
        perturbation=perturbation,
        criterion=criterion,
        defaults={"position": AssessmentUnit.objects.count() + 1},
    )
    return Assessment.objects.create(
        study=study,
        unit=unit,
        annotator=annotator,
        score=score,
        scale_min=criterion.scale_min,
        scale_max=criterion.scale_max,
    )


def council_texts(items, perts) -> None:
    """Two-sentence summaries, one perturbed text of each kind a scripted judge can tell
    apart: negation, word exchange, sentence exchange, a score-invariant rewording."""
    from apps.corpus.models import Perturbation

    for n, item in enumerate(items):
        first = f"The council of town {n} voted to close the library in March."
        second = f"Readers in town {n} protested outside the hall."
        item.original = f"{first} {second}"
        item.save(update_fields=["original"])
        texts = {
            "negation": f"{first.replace('voted to', 'voted not to')} {second}",
            "word-exchange": f"{first.replace('to close', 'close to')} {second}",
            "sentence-exchange": f"{second} {first}",
            "fbi-score-invariant": f"{first.replace('voted', 'decided')} {second}",
        }
        for kind, text in texts.items():
            if kind in perts:
                Perturbation.objects.filter(pk=perts[kind][n].pk).update(text=text)
