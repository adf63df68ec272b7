"""`generation_job_run`: apply rule-based kinds to a job's items, with checks and merging.

Idempotent: a perturbation's external id is derived from the rule, its derived seed and its
parameters, so running the job again (after a crash, say) creates nothing twice.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from apps.catalog.models import Method, PerturbationKind
from apps.corpus.generation.checks import output_flags
from apps.corpus.generation.llm import llm_generate, llm_work
from apps.corpus.generation.seeds import derived_seed
from apps.corpus.models import (
    GenerationJob,
    Origin,
    Perturbation,
    PerturbationVersion,
    SourceItem,
)
from apps.corpus.perturbers import PerturbationNotApplicable, apply_rule, degrees_of

SAVE_EVERY = 200
LLM_CHUNK = 64


@dataclass
class _Outcome:
    perturbations: list[Perturbation] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    problems: list[dict[str, str]] = field(default_factory=list)

    def count(self, what: str) -> None:
        self.counts[what] = self.counts.get(what, 0) + 1


def generation_job_run(*, job_id: int) -> None:
    """Run a generation job's rule-based kinds over its items, saving progress as it goes."""
    claimed = GenerationJob.objects.filter(
        pk=job_id, status__in=[GenerationJob.Status.PENDING, GenerationJob.Status.RUNNING]
    ).update(status=GenerationJob.Status.RUNNING)
    if not claimed:
        return
    job = GenerationJob.objects.select_related("generator").get(pk=job_id)
    kinds = list(job.kinds.filter(method=Method.RULE))
    llm_kinds = list(job.kinds.filter(method=Method.LLM)) if job.generator else []
    items = SourceItem.objects.filter(dataset_id=job.dataset_id).order_by("id")
    if job.item_ids:
        items = items.filter(pk__in=job.item_ids)
    pool = dict(SourceItem.objects.filter(dataset_id=job.dataset_id).values_list("id", "original"))
    job.total = items.count() * (len(kinds) + len(llm_kinds))
    job.save(update_fields=["total"])
    outcome = _Outcome()
    done = 0
    for item in items.iterator(chunk_size=500):
        for kind in kinds:
            _perturb(job, item, kind, pool, outcome)
            done += 1
        if len(outcome.perturbations) >= SAVE_EVERY:
            _save(outcome)
            GenerationJob.objects.filter(pk=job_id).update(done=done, counts=outcome.counts)
    _save(outcome)
    if llm_kinds:
        done += _run_llm(job, list(items.select_related("task")), llm_kinds, outcome)
    if job.study is not None:
        _into_vetting_queue(job, [*kinds, *llm_kinds])
    GenerationJob.objects.filter(pk=job_id).update(
        done=done,
        counts=outcome.counts,
        problems=outcome.problems[:200],
        status=GenerationJob.Status.DONE,
        finished_at=timezone.now(),
    )


def _into_vetting_queue(job: GenerationJob, kinds: list[PerturbationKind]) -> None:
    """The study takes the dataset and kinds, and its plan gains the new perturbations."""
    from apps.annotation.services.plan import study_plan_request

    assert job.study is not None
    job.study.datasets.add(job.dataset_id)
    job.study.kinds.add(*kinds)
    study_plan_request(study=job.study)


def _run_llm(job, items, kinds, outcome: _Outcome) -> int:
    """LLM kinds in chunks, saving after each so a crash loses at most one chunk's calls."""
    problems: list[dict[str, str]] = []
    work = llm_work(job, items, kinds, problems)
    skipped = len(items) * len(kinds) - len(work)
    for start in range(0, len(work), LLM_CHUNK):
        outcome.perturbations.extend(llm_generate(job, work[start : start + LLM_CHUNK], problems))
        _save(outcome)
        GenerationJob.objects.filter(pk=job.pk).update(
            done=F("done") + len(work[start : start + LLM_CHUNK]), counts=outcome.counts
        )
    for problem in problems:
        outcome.count("unusable" if "reply" in problem else "failed")
    outcome.problems.extend(problems)
    outcome.counts["already_there"] = outcome.counts.get("already_there", 0) + skipped
    return len(items) * len(kinds)


def _perturb(job, item: SourceItem, kind: PerturbationKind, pool, outcome: _Outcome) -> None:
    seed = derived_seed(job.seed, item.external_id, kind.slug)
    params: dict[str, Any] = dict(kind.parameters or {}) if job.use_kind_parameters else {}
    params.pop("max_edit_size", None)
    if kind.rule in ("random_ending", "random_answer"):
        params["pool"] = [text for pk, text in pool.items() if pk != item.pk]
    if kind.rule == "wrong_ending":
        params["wrong_ending"] = (item.metadata or {}).get("wrong_ending", "")
    degree = _degree(job, kind)
    try:
        result = apply_rule(kind.rule, item.original, seed=seed, degree=degree, **params)
    except PerturbationNotApplicable as exc:
        outcome.count("not_applicable")
        outcome.problems.append({"item": item.external_id, "kind": kind.slug, "reason": str(exc)})
        return
    recorded = {k: v for k, v in result.params.items() if k != "pool"}
    flags = output_flags(item.original, result.text, kind)
    outcome.perturbations.append(
        Perturbation(
            item=item,
            kind=kind,
            external_id=_external_id(kind.rule, seed, recorded),
            text=result.text,
            origin=Origin.RULE,
            rule_name=kind.rule,
            parameters=recorded,
            seed=seed,
            flags=flags,
        )
    )


def _degree(job, kind: PerturbationKind) -> str | None:
    if degrees_of(kind.rule) == (None,):
        return None
    return kind.degree or job.degree or "minor"


def _external_id(rule: str, seed: int, params: dict[str, Any]) -> str:
    digest = hashlib.sha1(json.dumps(params, sort_keys=True, default=str).encode()).hexdigest()
    return f"rule:{rule}:{seed}:{digest[:10]}"


@transaction.atomic
def _save(outcome: _Outcome) -> None:
    """Store new perturbations; same id or same text as a stored one of that item and kind
    means a duplicate, merged into the stored one (counted, not created)."""
    batch, outcome.perturbations = outcome.perturbations, []
    if not batch:
        return
    existing = set(
        Perturbation.objects.filter(item_id__in={p.item_id for p in batch}).values_list(
            "item_id", "kind_id", "external_id"
        )
    )
    texts = {
        (i, k, hashlib.sha1(t.encode()).digest())
        for i, k, t in Perturbation.objects.filter(
            item_id__in={p.item_id for p in batch}
        ).values_list("item_id", "kind_id", "text")
    }
    new = []
    for p in batch:
        text_key = (p.item_id, p.kind_id, hashlib.sha1(p.text.encode()).digest())
        if (p.item_id, p.kind_id, p.external_id) in existing or text_key in texts:
            outcome.count("merged")
            continue
        texts.add(text_key)
        new.append(p)
    created = Perturbation.objects.bulk_create(new)
    PerturbationVersion.objects.bulk_create(
        PerturbationVersion(perturbation=p, number=1, text=p.text) for p in created
    )
    for p in created:
        outcome.count("created")
        if p.flags:
            outcome.count("flagged")
