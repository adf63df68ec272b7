"""An endpoint's batch interface (OpenAI's ``/v1/files`` + ``/v1/batches``, which vLLM and
other OpenAI-compatible servers serve too): submit a file of requests, ask how far it is,
read its results. Half the price of live calls at most providers, answered within hours.

Through the same ``openai`` client as live calls (``client_for``: the egress policy checked
where it connects, the key from its granted variable, masked in everything returned). Each
function is one short exchange, run to completion here (the worker polls between them);
an error is a ``BatchError`` that says whether trying again later may help.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from apps.endpoints.client import (
    CallOutcome,
    EndpointConfig,
    MissingApiKeyError,
    client_for,
    close_clients,
    mask_key,
    read_completion,
    resolve_api_key,
)
from apps.endpoints.egress import egress_policy
from apps.endpoints.retry import InvalidResponse, RetryPolicy, classify, status_kind

T = TypeVar("T")
PATH = "/v1/chat/completions"
WINDOW = "24h"  # the only completion window OpenAI offers
METADATA_KEY = "discern_batch"
#: The provider's states in which a batch will change no more.
ENDED = frozenset({"completed", "expired", "failed", "cancelled"})


class BatchError(Exception):
    """The batch interface did not answer usefully; ``transient``: asking later may help."""

    def __init__(self, message: str, *, transient: bool) -> None:
        super().__init__(message)
        self.transient = transient


@dataclass(frozen=True)
class BatchState:
    """What the provider says of a batch."""

    id: str
    status: str
    total: int = 0
    completed: int = 0
    failed: int = 0
    output_file_id: str | None = None
    error_file_id: str | None = None
    errors: str = ""

    @property
    def ended(self) -> bool:
        return self.status in ENDED


def _state(batch: Any) -> BatchState:
    counts = batch.request_counts
    errors = getattr(batch, "errors", None)
    messages = [e.message or e.code or "" for e in (getattr(errors, "data", None) or [])]
    return BatchState(
        id=batch.id,
        status=batch.status,
        total=counts.total if counts else 0,
        completed=counts.completed if counts else 0,
        failed=counts.failed if counts else 0,
        output_file_id=batch.output_file_id,
        error_file_id=batch.error_file_id,
        errors="; ".join(m for m in messages if m),
    )


def _exchange(endpoint: EndpointConfig, work: Callable[[Any], Awaitable[T]]) -> T:
    """Run ``work(client)`` in a loop of its own; errors as ``BatchError``."""
    if problem := egress_policy().url_problem(endpoint.base_url):
        raise BatchError(problem, transient=False)
    try:
        key = resolve_api_key(endpoint)
    except MissingApiKeyError as exc:
        raise BatchError(str(exc), transient=False) from exc

    async def exchange() -> T:
        try:
            return await work(client_for(endpoint, key))
        finally:
            await close_clients()

    try:
        return asyncio.run(exchange())
    except BatchError:
        raise
    except Exception as exc:
        failure = classify(exc, RetryPolicy())
        if failure is None:
            raise
        message = mask_key(failure.message, key if endpoint.api_key_env else "") or ""
        raise BatchError(f"{failure.kind}: {message}", transient=failure.transient) from exc


def batch_submit(
    endpoint: EndpointConfig, bodies: Mapping[str, dict[str, Any]], token: str
) -> BatchState:
    """Upload one line per request (``custom_id`` → chat completion body) and start the
    batch, tagged with ``token`` (``batch_find`` looks for it)."""
    lines = [
        json.dumps({"custom_id": custom_id, "method": "POST", "url": PATH, "body": body})
        for custom_id, body in bodies.items()
    ]
    content = ("\n".join(lines) + "\n").encode()

    async def submit(client: Any) -> BatchState:
        uploaded = await client.files.create(
            file=(f"discern-{token}.jsonl", content, "application/jsonl"), purpose="batch"
        )
        batch = await client.batches.create(
            input_file_id=uploaded.id,
            endpoint=PATH,
            completion_window=WINDOW,
            metadata={METADATA_KEY: token},
        )
        return _state(batch)

    return _exchange(endpoint, submit)


def batch_find(endpoint: EndpointConfig, token: str) -> BatchState | None:
    """The batch tagged with ``token``, if the provider has one (a submit whose answer was
    never saved: the worker died in between)."""

    async def find(client: Any) -> BatchState | None:
        async for batch in client.batches.list(limit=100):
            if (batch.metadata or {}).get(METADATA_KEY) == token:
                return _state(batch)
        return None

    return _exchange(endpoint, find)


def batch_state(endpoint: EndpointConfig, batch_id: str) -> BatchState:
    async def retrieve(client: Any) -> BatchState:
        return _state(await client.batches.retrieve(batch_id))

    return _exchange(endpoint, retrieve)


def batch_results(endpoint: EndpointConfig, state: BatchState) -> dict[str, CallOutcome]:
    """Each answered line's outcome by ``custom_id`` (its output and error files); lines the
    batch never reached (it expired, failed or was cancelled first) are absent."""
    files = [f for f in (state.output_file_id, state.error_file_id) if f]

    async def read(client: Any) -> list[str]:
        return [(await client.files.content(file_id)).text for file_id in files]

    secret = "" if not endpoint.api_key_env else resolve_api_key(endpoint)
    outcomes: dict[str, CallOutcome] = {}
    for text in _exchange(endpoint, read):
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                custom_id, outcome = _line(line, number, endpoint)
                text_masked = mask_key(outcome.text, secret)
                error = mask_key(outcome.error_message, secret)
                outcomes[custom_id] = replace(outcome, text=text_masked, error_message=error)
    return outcomes


def _line(line: str, number: int, endpoint: EndpointConfig) -> tuple[str, CallOutcome]:
    """One result line: ``custom_id`` and what became of its request."""
    try:
        data = json.loads(line)
        custom_id = str(data["custom_id"])
    except (ValueError, KeyError, TypeError) as exc:
        message = f"result line {number} is not a batch result: {exc}"
        raise BatchError(message, transient=False) from exc
    response = data.get("response") or {}
    status = int(response.get("status_code") or 0)
    body = response.get("body")
    request_id = response.get("request_id")
    error = data.get("error")
    if status == 200 and isinstance(body, dict) and not error:
        try:
            outcome = read_completion(body, endpoint)
        except InvalidResponse as exc:
            failed = CallOutcome(
                ok=False, error_kind="invalid_response", error_message=str(exc), attempts=1
            )
            return custom_id, failed
        return custom_id, replace(outcome, request_id=request_id, attempts=1)
    said = error or (body.get("error") if isinstance(body, dict) else None)
    message = str(said.get("message") or "") if isinstance(said, dict) else str(said or "")
    return custom_id, CallOutcome(
        ok=False,
        error_kind=status_kind(status) if status else "server_error",
        error_message=f"in the batch: {message or f'HTTP {status}'}",
        status_code=status or None,
        request_id=request_id,
        attempts=1,
    )
