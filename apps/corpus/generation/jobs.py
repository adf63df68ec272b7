"""Generation jobs: ``generation_job_start`` records what to generate and hands it to the
worker (a job that calls a model is recorded unstarted, to show its estimate first:
estimate.py; ``generation_job_queue`` starts it); ``generation_job_run`` (the worker's) applies
the rule-based kinds, then has the LLM-written kinds written by the job's endpoint, storing and
merging as it goes, and hands the results to the job's destinations (e.g. a study's vetting
queue).

Idempotent: every perturbation's external id is derived from how it was made, so running a job
again (after a crash, say) creates nothing twice and calls no endpoint twice.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db import transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from apps.catalog.models import Method, PerturbationKind
from apps.corpus.generation.destinations import results_deliver
from apps.corpus.generation.llm import llm_generate, llm_work
from apps.corpus.generation.rules import rule_perturbation
from apps.corpus.generation.storing import Outcome, perturbations_store
from apps.corpus.models import Dataset, GenerationJob, SourceItem
from apps.endpoints.models import Endpoint

SAVE_EVERY = 200
LLM_CHUNK = 64


@transaction.atomic
def generation_job_start(
    *,
    dataset: Dataset,
    kinds: Iterable[PerturbationKind],
    user,
    degree: str = "",
    seed: int = 0,
    item_ids: list[int] | None = None,
    use_kind_parameters: bool = False,
    deliver_to: dict[str, Any] | None = None,
    generator: Endpoint | None = None,
    temperature: float = 0.7,
    max_tokens: int = 2048,
    start: bool = True,
) -> GenerationJob:
    """``deliver_to``: where the results go too ({destination name: id}, see destinations.py);
    ``generator``: the endpoint that writes the LLM kinds; ``start`` False: recorded only, for
    its estimate (started by ``generation_job_queue``)."""
    job = GenerationJob.objects.create(
        started=False,
        dataset=dataset,
        generator=generator,
        temperature=temperature,
        max_tokens=max_tokens,
        degree=degree,
        seed=seed,
        item_ids=item_ids or [],
        use_kind_parameters=use_kind_parameters,
        deliver_to=deliver_to or {},
        created_by=user,
    )
    job.kinds.set(kinds)
    return generation_job_queue(job) if start else job


@transaction.atomic
def generation_job_queue(job: GenerationJob) -> GenerationJob:
    """Start a recorded job: the worker runs it once this transaction commits."""
    GenerationJob.objects.filter(pk=job.pk).update(started=True)
    job.started = True
    from workers.tasks.generation import run_generation_job

    transaction.on_commit(lambda: run_generation_job.delay(job.pk))
    return job


def generation_job_run_here(job: GenerationJob) -> None:
    """Start a recorded job and run it in this process, not on a worker (the demo's rule-based
    kinds, written while it loads)."""
    GenerationJob.objects.filter(pk=job.pk).update(started=True)
    generation_job_run(job_id=job.pk)


def generation_job_run(*, job_id: int) -> None:
    """Run a generation job over its items, saving progress as it goes (see the module)."""
    claimed = GenerationJob.objects.filter(
        pk=job_id,
        started=True,
        status__in=[GenerationJob.Status.PENDING, GenerationJob.Status.RUNNING],
    ).update(status=GenerationJob.Status.RUNNING)
    if not claimed:
        return
    job = GenerationJob.objects.select_related("generator", "created_by").get(pk=job_id)
    kinds = list(job.kinds.filter(method=Method.RULE))
    llm_kinds = job_llm_kinds(job)
    items = job_items(job)
    pool = dict(SourceItem.objects.filter(dataset_id=job.dataset_id).values_list("id", "original"))
    job.total = items.count() * (len(kinds) + len(llm_kinds))
    job.save(update_fields=["total"])
    outcome = Outcome()
    done = 0
    for item in items.iterator(chunk_size=500):
        for kind in kinds:
            rule_perturbation(job, item, kind, pool, outcome)
            done += 1
        if len(outcome.perturbations) >= SAVE_EVERY:
            perturbations_store(outcome)
            GenerationJob.objects.filter(pk=job_id).update(done=done, counts=outcome.counts)
    perturbations_store(outcome)
    if llm_kinds:
        done += _run_llm(job, list(items.select_related("task")), llm_kinds, outcome)
    results_deliver(job, [*kinds, *llm_kinds])
    GenerationJob.objects.filter(pk=job_id).update(
        done=done,
        counts=outcome.counts,
        problems=outcome.problems[:200],
        status=GenerationJob.Status.DONE,
        finished_at=timezone.now(),
    )


def job_items(job: GenerationJob) -> QuerySet[SourceItem]:
    """The items the job perturbs: its chosen ones, else every item of its dataset."""
    items = SourceItem.objects.filter(dataset_id=job.dataset_id).order_by("id")
    return items.filter(pk__in=job.item_ids) if job.item_ids else items


def job_llm_kinds(job: GenerationJob) -> list[PerturbationKind]:
    """The LLM-written kinds the job's generator writes (none without a generator)."""
    return list(job.kinds.filter(method=Method.LLM)) if job.generator_id else []


def _run_llm(job, items, kinds, outcome: Outcome) -> int:
    """LLM kinds in chunks, saving after each so a crash loses at most one chunk's calls."""
    problems: list[dict[str, str]] = []
    work = llm_work(job, items, kinds, problems)
    skipped = len(items) * len(kinds) - len(work)
    for start in range(0, len(work), LLM_CHUNK):
        outcome.perturbations.extend(llm_generate(job, work[start : start + LLM_CHUNK], problems))
        perturbations_store(outcome)
        GenerationJob.objects.filter(pk=job.pk).update(
            done=F("done") + len(work[start : start + LLM_CHUNK]), counts=outcome.counts
        )
    for problem in problems:
        outcome.count("unusable" if "reply" in problem else "failed")
    outcome.problems.extend(problems)
    outcome.counts["already_there"] = outcome.counts.get("already_there", 0) + skipped
    return len(items) * len(kinds)
