"""Nobody spends by surprise: a generation job that calls a model (LLM-written kinds with a
generator) shows its estimate before it starts, and one above the limit starts only when
confirmed (docs/annotation.md, "Generating perturbations"; judge runs do the same:
docs/judging.md, "Before a run starts").

The job is recorded unstarted; its calls are listed as the worker will make them
(``llm_work``: one call per item and LLM kind, without the pairs whose perturbation is
already there, which the worker skips and never asks for again). Prompt tokens: the built
prompts' characters / 4; completion tokens: the job's ``max_tokens`` per request, an upper
bound. An endpoint has no prices: the cost is unknown. The limit: the one a destination sets
(a study's ``confirm_above_requests``), else the server's ``DISCERN_CONFIRM_ABOVE_REQUESTS``.
Rule-based kinds call no model: a job of those alone starts at once.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction

from apps.catalog.models import Method, PerturbationKind
from apps.corpus.generation.destinations import destination_limit
from apps.corpus.generation.jobs import generation_job_queue, job_items, job_llm_kinds
from apps.corpus.generation.llm import llm_messages, llm_work
from apps.corpus.models import GenerationJob
from apps.endpoints.models import Endpoint

CHARS_PER_TOKEN = 4
COMPLETION_SOURCE = "the job's max tokens per request, an upper bound"


@dataclass(frozen=True)
class GenerationEstimate:
    """What starting an LLM generation job would send: calls (item × LLM kind pairs), those
    already there (skipped: no request), HTTP requests, tokens, cost, what was left out and
    the limit above which it asks to be confirmed."""

    model: str
    calls: int
    already_there: int
    http_calls: int
    prompt_tokens: int
    completion_tokens: int
    completion_source: str
    cost: Decimal | None
    limit: int
    limit_of: str  # whose limit: "this study's", or "the" (the server's)
    left_out: list[dict[str, Any]]

    @property
    def over_limit(self) -> bool:
        return self.http_calls > self.limit

    def as_dict(self) -> dict[str, Any]:
        fields = {name: getattr(self, name) for name in self.__dataclass_fields__}
        fields["cost"] = None if self.cost is None else str(round(self.cost, 4))
        return fields | {"over_limit": self.over_limit}


def calls_a_model(kinds: Iterable[PerturbationKind], generator: Endpoint | None) -> bool:
    """Whether a job of these kinds calls a model: an LLM-written kind with a generator."""
    return generator is not None and any(k.method == Method.LLM for k in kinds)


def needs_estimate(job: GenerationJob) -> bool:
    """A job recorded but not started that calls a model."""
    return not job.started and bool(job_llm_kinds(job))


def confirm_limit(job: GenerationJob) -> tuple[int, str]:
    """HTTP requests above which the job asks to be confirmed, and whose limit it is: its
    study's (a destination's), else the server's."""
    limit, name = destination_limit(job)
    if limit is None:
        return settings.DISCERN_CONFIRM_ABOVE_REQUESTS, f"this {name}'s" if name else "the"
    return limit, f"this {name}'s"


def generation_job_estimate(job: GenerationJob) -> GenerationEstimate:
    """List the calls the worker would make (nothing is sent) and estimate them."""
    kinds = job_llm_kinds(job)
    items = list(job_items(job).select_related("task"))
    problems: list[dict[str, str]] = []
    work = llm_work(job, items, kinds, problems)
    no_prompt = [p["kind"] for p in problems]
    chars = sum(
        len(message["content"])
        for item, _kind, prompt, _seed, _id in work
        for message in llm_messages(item, prompt)
    )
    calls = len(items) * len(kinds)
    limit, limit_of = confirm_limit(job)
    return GenerationEstimate(
        model=job.generator.model if job.generator else "",
        calls=calls,
        already_there=calls - len(items) * len(no_prompt) - len(work),
        http_calls=len(work),
        prompt_tokens=chars // CHARS_PER_TOKEN,
        completion_tokens=job.max_tokens * len(work),
        completion_source=COMPLETION_SOURCE,
        cost=None,  # an endpoint has no prices
        limit=limit,
        limit_of=limit_of,
        left_out=[{"count": len(items), "reason": f"no prompt for {s}"} for s in no_prompt],
    )


@transaction.atomic
def generation_job_confirm(*, job: GenerationJob, confirmed: bool) -> GenerationJob:
    """Start a recorded job after its estimate: refused when it is above the limit and not
    ``confirmed``."""
    estimate = generation_job_estimate(job)
    job = GenerationJob.objects.select_for_update().get(pk=job.pk)
    if job.started:
        raise ValidationError({"job": f"generation {job.pk} has started already"})
    if estimate.over_limit and not confirmed:
        raise ValidationError(
            {
                "confirm": f"this generation would send {estimate.http_calls} requests to the "
                f"model, above the limit of {estimate.limit}: confirm to start it"
            }
        )
    return generation_job_queue(job)
