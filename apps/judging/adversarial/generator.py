"""The generator's calls: prompts built from the trajectory, asked through the same client,
retry layer and limits as judge calls, and kept like them (docs/methods.md §6).

- One call per item and iteration, all the search's pending ones at once, up to the
  generator endpoint's concurrency; with Redis under the same shared slots and
  requests-per-minute window as every judge run on that endpoint (``limits``).
- A prompt asked before (same endpoint, model, parameters and messages: the cache key) is
  answered from the stored reply, with no HTTP request; errors are never reused.
- The seed sent is derived from the item and the iteration, so a search run again with the
  same settings asks the same questions (and gets its replies from the cache), while two
  iterations with the same trajectory still ask two different questions.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import redis.asyncio
from django.conf import settings

from apps.judging.limits import EndpointLimiter, LocalRateLimiter, RedisRateLimiter, RedisSemaphore
from apps.judging.llm_client import (
    CallOutcome,
    SamplingParams,
    build_request,
    call_cache_key,
    close_clients,
    complete,
)
from apps.judging.models import AdversarialSearch, Judge, ParseStatus, SearchIteration
from apps.judging.reserved_slots import SLOT_LEASE_S, SLOT_PREFIX, slots_key


@dataclass
class GeneratorCall:
    """One generator call: what is asked, and what came back (a reply, or a stored one)."""

    iteration_id: int
    messages: list[dict[str, str]]
    params: SamplingParams
    key: str
    request: dict[str, Any]
    outcome: CallOutcome | None = None
    cached: dict[str, Any] | None = None  # the stored iteration whose reply is reused


def iteration_seed(item_id: int, method: str, number: int) -> int:
    digest = hashlib.sha256(f"adveval|{item_id}|{method}|{number}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def prepare(
    search: AdversarialSearch, iteration: SearchIteration, messages: list[dict[str, str]]
) -> GeneratorCall:
    generator = search.generator
    defaults: dict[str, Any] = generator.default_params or {}
    item = iteration.search_item
    params = SamplingParams(
        max_tokens=search.generator_max_tokens,
        temperature=search.generator_temperature,
        top_p=defaults.get("top_p"),
        seed=iteration_seed(item.item_id, item.method, iteration.number),
    )
    endpoint = generator.endpoint()
    request = {"endpoint": endpoint.base_url, "body": build_request(endpoint, messages, params)}
    key = call_cache_key(endpoint, messages, params)
    return GeneratorCall(iteration.pk, messages, params, key, request)


CACHED_COLUMNS = (
    "id",
    "raw_response",
    "prompt_tokens",
    "completion_tokens",
    "request_id",
    "response_model",
    "finish_reason",
)


def _stored(keys: Sequence[str]) -> dict[str, dict[str, Any]]:
    rows = (
        SearchIteration.objects.filter(
            cache_key__in=keys,
            cached=False,
            parse_status__in=[ParseStatus.PARSED, ParseStatus.UNPARSED],
        )
        .order_by("id")
        .values("cache_key", *CACHED_COLUMNS)
    )
    found: dict[str, dict[str, Any]] = {}
    for row in rows:
        found.setdefault(row.pop("cache_key"), row)
    return found


def ask_all(generator: Judge, calls: Sequence[GeneratorCall]) -> int:
    """Answer every call: from the cache where possible, else over HTTP (concurrently).
    Returns the HTTP attempts made."""
    stored = _stored([c.key for c in calls])
    fresh = []
    for call in calls:
        if call.key in stored:
            call.cached = stored[call.key]
        else:
            fresh.append(call)
    if not fresh:
        return 0
    return asyncio.run(_ask(generator, fresh))


async def _ask(generator: Judge, calls: Sequence[GeneratorCall]) -> int:
    attempts = 0

    async def counted() -> None:
        nonlocal attempts
        attempts += 1

    endpoint = generator.endpoint()
    limiter, client = _limiter(generator)
    try:
        outcomes = await asyncio.gather(
            *(
                complete(endpoint, c.messages, c.params, limiter=limiter, on_attempt=counted)
                for c in calls
            )
        )
    finally:
        await close_clients()
        if client is not None:
            await client.aclose()
    for call, outcome in zip(calls, outcomes, strict=True):
        call.outcome = outcome
    return attempts


def _limiter(generator: Judge) -> tuple[EndpointLimiter, Any]:
    """The endpoint's limits, shared (with Redis) with every judge run on the same endpoint:
    the same slots and requests-per-minute window (apps.judging.engine.llm_work)."""
    limiter = EndpointLimiter(asyncio.Semaphore(generator.max_concurrency))
    redis_url = getattr(settings, "REDIS_URL", "")
    if not redis_url:
        if generator.requests_per_minute:
            limiter.rate = LocalRateLimiter(generator.requests_per_minute)
        return limiter, None
    client = redis.asyncio.Redis.from_url(redis_url)
    limiter.shared = RedisSemaphore(
        client,
        slots_key(generator.limit_key),
        generator.max_concurrency,
        lease_s=SLOT_LEASE_S,
    )
    if generator.requests_per_minute:
        limiter.rate = RedisRateLimiter(
            client, f"{SLOT_PREFIX}:rpm:{generator.limit_key}", generator.requests_per_minute
        )
    return limiter, client
