"""LLM-written kinds: each kind's latest prompt (instruction + worked examples) goes to the
job's endpoint through the same runner, client and limiter as judge runs
(``apps.endpoints.runner``): its concurrency and requests per minute hold across all workers and
every caller of that endpoint.

A reply is parsed into the perturbed text and the generator's explanation; an unusable reply
or a failed call is recorded in the job's problems with its reason, never stored as a
perturbation. Provenance keeps the whole call: endpoint, model, parameters, prompt version,
messages, raw reply, request id, tokens. Re-running creates (and calls) nothing twice: the
perturbation id is derived from the prompt version, generator, parameters and seed, and
existing ids are skipped before any call is made.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict
from typing import Any

from apps.catalog.models import KindPrompt, PerturbationKind
from apps.corpus.generation.checks import checked
from apps.corpus.generation.llm_prompt import build_messages, parse_generation
from apps.corpus.generation.seeds import derived_seed
from apps.corpus.models import GenerationJob, Origin, Perturbation, SourceItem
from apps.endpoints.client import CallOutcome, EndpointConfig, SamplingParams
from apps.endpoints.runner import Ask, Runner


def _external_id(job: GenerationJob, prompt: KindPrompt, seed: int) -> str:
    generator = job.generator
    assert generator is not None
    key = f"{generator.base_url}|{generator.model}|{job.temperature}|{job.max_tokens}|{seed}"
    return f"llm:v{prompt.version}:{hashlib.sha1(key.encode()).hexdigest()[:16]}"


def llm_work(
    job: GenerationJob,
    items: list[SourceItem],
    kinds: list[PerturbationKind],
    problems: list[dict[str, str]],
) -> list[tuple[SourceItem, PerturbationKind, KindPrompt, int, str]]:
    """(item, kind, prompt, seed, external id) still to write; kinds without a prompt are
    reported, existing perturbations skipped."""
    prompts = {}
    for kind in kinds:
        prompt = KindPrompt.objects.filter(kind=kind).order_by("-version").first()
        if prompt is None:
            problems.append({"item": "*", "kind": kind.slug, "reason": "no prompt for this kind"})
        else:
            prompts[kind.pk] = prompt
    existing = set(
        Perturbation.objects.filter(item__in=items, kind__in=kinds).values_list(
            "item_id", "kind_id", "external_id"
        )
    )
    work = []
    for item in items:
        for kind in kinds:
            if kind.pk not in prompts:
                continue
            seed = derived_seed(job.seed, item.external_id, kind.slug)
            external_id = _external_id(job, prompts[kind.pk], seed)
            if (item.pk, kind.pk, external_id) not in existing:
                work.append((item, kind, prompts[kind.pk], seed, external_id))
    return work


def llm_messages(item: SourceItem, prompt: KindPrompt) -> list[dict[str, str]]:
    """The messages of one call: the kind's prompt and worked examples, then the item."""
    return build_messages(
        instruction=prompt.instruction,
        examples=prompt.examples,
        original=item.original,
        source=item.source,
        text_name=item.task.text_name if item.task else "text",
    )


def llm_generate(job: GenerationJob, work, problems: list[dict[str, str]]) -> list[Perturbation]:
    """Make the calls and turn usable replies into (unsaved) perturbations."""
    if not work:
        return []
    assert job.generator is not None
    outcomes = _call_all(job, job.generator.config(), work)
    made = []
    for (item, kind, prompt, seed, external_id), (messages, params, outcome) in zip(
        work, outcomes, strict=True
    ):
        where = {"item": item.external_id, "kind": kind.slug}
        if not outcome.ok:
            problems.append(
                {**where, "reason": f"call failed: {outcome.error_kind}: {outcome.error_message}"}
            )
            continue
        parsed = parse_generation(outcome.text or "", item.original)
        if parsed.status != "parsed" or parsed.text is None:
            problems.append(
                {
                    **where,
                    "reason": f"unusable reply ({parsed.reason})",
                    "reply": (outcome.text or "")[:2000],
                }
            )
            continue
        perturbation = Perturbation(
            item=item,
            kind=kind,
            external_id=external_id,
            text=parsed.text,
            explanation=parsed.explanation,
            origin=Origin.LLM,
            seed=seed,
            parameters={
                "temperature": job.temperature,
                "max_tokens": job.max_tokens,
                "prompt_version": prompt.version,
            },
            generation=_provenance(job, prompt, messages, params, outcome),
        )
        made.append(checked(perturbation, kind, prompt.max_edit_size))
    return made


def _call_all(
    job: GenerationJob, endpoint: EndpointConfig, work
) -> list[tuple[list, SamplingParams, CallOutcome]]:
    """Every call at once, in the order of ``work``: the endpoint's limiter lets through as
    many as its concurrency and requests per minute allow, over all workers."""
    asks = [
        Ask(
            index,
            llm_messages(item, prompt),
            SamplingParams(
                max_tokens=job.max_tokens, temperature=job.temperature, seed=seed % 2**31
            ),
        )
        for index, (item, _kind, prompt, seed, _id) in enumerate(work)
    ]
    outcomes: dict[int, CallOutcome] = {}
    with Runner(endpoint) as runner:
        for answer in runner.run(asks):
            assert answer.outcome is not None  # never stopped: every ask is asked
            outcomes[answer.handle] = answer.outcome
    return [(ask.messages, ask.params, outcomes[ask.handle]) for ask in asks]


def _provenance(job, prompt, messages, params, outcome: CallOutcome) -> dict[str, Any]:
    generator = job.generator
    return {
        "generator": generator.name,
        "base_url": generator.base_url,
        "model": generator.model,
        "prompt_version": prompt.version,
        "messages": messages,
        "params": {k: v for k, v in asdict(params).items() if v is not None},
        "reply": outcome.text,
        "request_id": outcome.request_id,
        "system_fingerprint": outcome.system_fingerprint,
        "attempts": outcome.attempts,
        "prompt_tokens": outcome.prompt_tokens,
        "completion_tokens": outcome.completion_tokens,
        "latency_s": outcome.latency_s,
    }
