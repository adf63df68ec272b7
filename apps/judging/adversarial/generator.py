"""The generator's calls: prompts built from the trajectory, asked through the endpoint layer
(``apps.endpoints.runner``: the one runner, client, retry layer and limiter every model caller
uses), and kept like judge calls (docs/methods.md §6).

- One call per item and iteration, all the search's pending ones at once, under the generator
  endpoint's limiter: its concurrency and requests per minute hold across workers and every
  caller of that endpoint (a judge run or a generation job on it included); each reply is
  stored as soon as it comes, not when the round's last one does.
- A prompt asked before (same endpoint, model, parameters and messages: the cache key) is
  answered from the stored reply, with no HTTP request; errors are never reused
  (``apps.judging.stored_replies``, as for judge calls).
- The seed sent is derived from the item's id and the iteration, so a search run again with the
  same settings asks the same questions (and gets its replies from the cache), while two
  iterations with the same trajectory still ask two different questions.
- A reply with no candidate in it is asked once more, with a format reminder (kept on the
  iteration as ``format_retry``, as for judge calls; the runner makes it).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from apps.endpoints.client import CallOutcome, SamplingParams, build_request, call_cache_key
from apps.endpoints.models import Endpoint
from apps.endpoints.runner import Ask, Runner
from apps.judging.adversarial.prompt import FORMAT_REMINDER, ParsedCandidates, parse_candidates
from apps.judging.models import AdversarialSearch, ParseStatus, SearchIteration
from apps.judging.stored_replies import stored_replies


@dataclass
class GeneratorCall:
    """One generator call: what is asked, and what came back (a reply, or a stored one)."""

    iteration_id: int
    messages: list[dict[str, str]]
    params: SamplingParams
    key: str
    request: dict[str, Any]
    wanted: int
    outcome: CallOutcome | None = None
    retry: CallOutcome | None = None  # the second ask, with a format reminder, if made
    cached: dict[str, Any] | None = None  # the stored iteration whose reply is reused
    attempts: int = 0  # HTTP attempts made for it (its format retry's included)

    def ask(self) -> Ask:
        """The request, asked once more with a format reminder if its reply has no
        candidate."""
        return Ask(self, self.messages, self.params, self.parsed, with_reminder)

    def parsed(self, text: str, logprobs: object = None) -> bool:
        return parse_candidates(text, self.wanted).parsed

    def retry_record(self) -> dict[str, Any] | None:
        """The format retry as stored on the iteration (None when none was made)."""
        second = self.retry
        if second is None:
            return None
        return {
            "reminder": FORMAT_REMINDER,
            "raw_response": second.text or "",
            "ok": second.ok,
            "error": second.error_message or "",
            "attempts": second.attempts,
            "prompt_tokens": second.prompt_tokens,
            "completion_tokens": second.completion_tokens,
            "request_id": second.request_id,
        }


def with_reminder(messages: list[dict[str, str]], reply: str) -> list[dict[str, str]]:
    """The messages of the format retry: the reply, then the reminder."""
    return [
        *messages,
        {"role": "assistant", "content": reply},
        {"role": "user", "content": FORMAT_REMINDER},
    ]


def iteration_seed(external_id: str, method: str, number: int) -> int:
    """The seed of an item's iteration: from the item's own id in its dataset (the same
    after a re-import), the method and the iteration number."""
    digest = hashlib.sha256(f"adveval|{external_id}|{method}|{number}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def prepare(
    search: AdversarialSearch, iteration: SearchIteration, messages: list[dict[str, str]]
) -> GeneratorCall:
    generator: Endpoint = search.generator
    defaults: dict[str, Any] = generator.default_params or {}
    item = iteration.search_item
    params = SamplingParams(
        max_tokens=search.generator_max_tokens,
        temperature=search.generator_temperature,
        top_p=defaults.get("top_p"),
        seed=iteration_seed(item.item.external_id, item.method, iteration.number),
    )
    endpoint = generator.config()
    request = {"endpoint": endpoint.base_url, "body": build_request(endpoint, messages, params)}
    key = call_cache_key(endpoint, messages, params)
    return GeneratorCall(iteration.pk, messages, params, key, request, iteration.wanted)


CACHED_COLUMNS = (
    "id",
    "raw_response",
    "format_retry",
    "prompt_tokens",
    "completion_tokens",
    "request_id",
    "response_model",
    "finish_reason",
)


def ask_all(
    generator: Endpoint,
    calls: Sequence[GeneratorCall],
    answered: Callable[[GeneratorCall], None],
    node: str = "",
) -> None:
    """Answer every call: from the cache where possible, else over HTTP (concurrently), and
    hand each to ``answered`` (in this thread) as soon as it has its reply, so that one call
    still waiting for the endpoint's limits keeps no finished reply from being stored (a
    worker killed meanwhile loses none). ``node``: the worker, whose slots a restart frees."""
    stored = stored_replies(SearchIteration, [c.key for c in calls], CACHED_COLUMNS)
    fresh = []
    for call in calls:
        if call.key in stored:
            call.cached = stored[call.key]
            answered(call)
        else:
            fresh.append(call)
    if not fresh:
        return
    with Runner(generator.config(), node=node) as runner:
        for answer in runner.run(call.ask() for call in fresh):
            call = answer.handle
            call.outcome, call.retry, call.attempts = answer.outcome, answer.retry, answer.attempts
            answered(call)


# -- the replies, onto their iterations --------------------------------------------------------


def fill_iteration(iteration: SearchIteration, call: GeneratorCall) -> bool:
    """Fill the iteration from the call's reply (or the stored one it reuses); False when
    the call got no usable reply (the error is recorded)."""
    iteration.request, iteration.cache_key = call.request, call.key
    if call.cached is not None:
        stored = call.cached
        iteration.cached, iteration.cached_from_id = True, stored["id"]
        for column in CACHED_COLUMNS[1:]:
            setattr(iteration, column, stored[column])
        iteration.attempts = 0
        return True
    outcome = call.outcome
    assert outcome is not None
    iteration.cached = False
    iteration.attempts, iteration.latency = outcome.attempts, outcome.latency_s
    iteration.request_id = outcome.request_id or ""
    iteration.response_model = outcome.model or ""
    iteration.finish_reason = outcome.finish_reason or ""
    iteration.prompt_tokens = outcome.prompt_tokens
    iteration.completion_tokens = outcome.completion_tokens
    if not outcome.ok:
        iteration.parse_status = ParseStatus.ERROR
        iteration.error_kind = outcome.error_kind or "error"
        iteration.error = outcome.error_message or ""
        if outcome.status_code is not None:
            iteration.error = f"HTTP {outcome.status_code}: {iteration.error}"
        return False
    iteration.raw_response = outcome.text or ""
    iteration.format_retry = call.retry_record()
    iteration.error_kind = iteration.error = ""
    return True


def read_candidates(iteration: SearchIteration) -> list[str]:
    """The candidates of the iteration's reply (or of its format retry), its parse status and
    reason set: unparsed when neither reply holds one."""
    parsed = parse_candidates(iteration.raw_response, iteration.wanted)
    retry = iteration.format_retry or {}
    if not parsed.parsed and retry:
        second = parse_candidates(retry.get("raw_response") or "", iteration.wanted)
        why = f"{second.reason} (after a format reminder)"
        if not second.parsed:
            why = f"{parsed.reason}; after a format reminder: {second.reason}"
        parsed = ParsedCandidates(second.texts, second.parsed, why)
    iteration.parse_status = ParseStatus.PARSED if parsed.parsed else ParseStatus.UNPARSED
    iteration.parse_reason = parsed.reason
    return parsed.texts


def paid_tokens(iteration: SearchIteration) -> tuple[int, int]:
    """Prompt and completion tokens of the iteration's calls, the format retry included."""
    retry = iteration.format_retry or {}
    prompt = (iteration.prompt_tokens or 0) + int(retry.get("prompt_tokens") or 0)
    completion = (iteration.completion_tokens or 0) + int(retry.get("completion_tokens") or 0)
    return prompt, completion
