"""`generation_job_start`: record what to generate and hand it to the worker."""

from __future__ import annotations

from collections.abc import Iterable

from django.db import transaction

from apps.catalog.models import PerturbationKind
from apps.corpus.models import Dataset, GenerationJob


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
    study=None,
    generator=None,
    temperature: float = 0.7,
    max_tokens: int = 2048,
) -> GenerationJob:
    job = GenerationJob.objects.create(
        dataset=dataset,
        generator=generator,
        temperature=temperature,
        max_tokens=max_tokens,
        degree=degree,
        seed=seed,
        item_ids=item_ids or [],
        use_kind_parameters=use_kind_parameters,
        study=study,
        created_by=user,
    )
    job.kinds.set(kinds)
    from workers.tasks.generation import run_generation_job

    transaction.on_commit(lambda: run_generation_job.delay(job.pk))
    return job
