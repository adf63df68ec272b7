"""The one way to call a model: ``complete(endpoint, messages, params)`` makes one logical
call (a judge's, a generator's...) and always returns a ``CallOutcome`` (it raises only on
bugs and cancellation):

- the request is the OpenAI wire format (``build_request``), POSTed to ``/chat/completions``
  or ``/completions`` on the running loop's aiohttp session (``egress_guard.guarded_session``:
  the egress policy checked where it connects), with the value of the environment variable
  *named* by the endpoint as a bearer key (never logged or stored). Not through the ``openai``
  SDK: its request machinery (an options model, header and URL objects, an httpx adapter)
  cost 1.0-1.3 ms of CPU a call, three times the HTTP exchange itself, and a reply is a JSON
  object of which we read a few fields (``read_completion``). The SDK client (``client_for``)
  speaks the batch interface (``apps.endpoints.batches``), files and batches, once a step;
- our single retry layer retries 429, 5xx, timeouts and connection errors with full-jitter
  backoff or the server's Retry-After, up to ``max_attempts``: which failures and how long
  to wait are ours (``apps.endpoints.retry``), the loop is tenacity's (``_retrying``),
  entered with the first failure (a first attempt that succeeds costs no retry machinery);
- each HTTP attempt holds one slot of the endpoint's limiter (``apps.endpoints.limiter``: its
  concurrency and requests per minute, shared by all workers through Redis); the slot is
  released while waiting to retry;
- ``max_tokens`` is always sent; the outcome records text, token usage, latency, attempts,
  the server's request id (``x-request-id``), system_fingerprint and, if asked, logprobs;
- the endpoint's key never leaves in an outcome: ``mask_key`` replaces it by "***" in the
  reply text and the error message.

Errors of the limiter's own infrastructure (Redis unreachable) are not the endpoint's fault
and propagate, for the worker's task-level retry to handle.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import logging
import os
import random
import ssl
import time
import weakref
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

import aiohttp
import tenacity

from apps.endpoints.cache_key import cache_key
from apps.endpoints.egress import egress_policy, normal_url
from apps.endpoints.key_names import key_name_problem
from apps.endpoints.limiter import EndpointLimiter, limiter_for, limiters_close
from apps.endpoints.retry import (
    AttemptDeadline,
    ErrorKind,
    Failure,
    HttpConnectionError,
    HttpStatusError,
    InvalidResponse,
    RetryPolicy,
    backoff_delay,
    classify,
)

if TYPE_CHECKING:  # imported where used, so that loading the models never imports the SDK
    import openai

logger = logging.getLogger(__name__)

Messages = Sequence[Mapping[str, Any]] | str
TokenLogprobs = list[dict[str, Any]]
NO_KEY_PLACEHOLDER = "not-needed"  # local servers (vLLM, Ollama, llama.cpp) ignore the key


@dataclass(frozen=True)
class EndpointConfig:
    """An OpenAI-compatible endpoint and the model to call on it."""

    base_url: str
    model: str
    api_key_env: str = ""  # NAME of the environment variable holding the key ("" = no key)
    key_refused: str = ""  # why the key may not be sent here (no grant covers it), if so
    name: str = ""  # identity for the limits (an Endpoint's limit_key); defaults to base_url
    timeout_s: float = 60.0
    max_concurrency: int = 8
    requests_per_minute: int | None = None
    api: Literal["chat", "completions"] = "chat"
    max_tokens_param: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    retry: RetryPolicy = field(default_factory=RetryPolicy)

    @property
    def limit_key(self) -> str:
        return self.name or self.base_url.rstrip("/")


@dataclass(frozen=True)
class SamplingParams:
    max_tokens: int = 512  # always sent: a judge reply must be bounded
    temperature: float | None = 0.0
    top_p: float | None = None
    seed: int | None = None
    logprobs: bool = False
    top_logprobs: int | None = None
    stop: tuple[str, ...] | None = None
    sample_index: int = 0  # which of R samples of the same prompt; keys the cache, not sent

    def __post_init__(self) -> None:
        if self.max_tokens < 1:
            raise ValueError("max_tokens must be at least 1")
        if self.top_logprobs is not None and not (self.logprobs and 0 <= self.top_logprobs <= 20):
            raise ValueError("top_logprobs needs logprobs=True and must be within 0-20")


@dataclass(frozen=True)
class CallOutcome:
    ok: bool
    text: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_s: float | None = None  # the last HTTP attempt's round trip
    total_s: float = 0.0  # the whole call: limiter waits, retries and backoff included
    attempts: int = 0
    request_id: str | None = None
    system_fingerprint: str | None = None
    model: str | None = None  # as reported by the server
    finish_reason: str | None = None
    logprobs: TokenLogprobs | None = None  # [{"token", "logprob", "top_logprobs": [...]}]
    error_kind: ErrorKind | None = None
    error_message: str | None = None
    status_code: int | None = None  # HTTP status of the failed last attempt, if it had one


class MissingApiKeyError(Exception):
    pass


def resolve_api_key(endpoint: EndpointConfig) -> str:
    """The key from the environment variable the endpoint names (never from anywhere else).

    The only place a key is read: a name outside the allow-list (apps.endpoints.key_names) is
    refused here too, whatever the database says.
    """
    if not endpoint.api_key_env:
        return NO_KEY_PLACEHOLDER
    if endpoint.key_refused:
        raise MissingApiKeyError(
            f"key variable {endpoint.api_key_env} refused: {endpoint.key_refused}"
        )
    if problem := key_name_problem(endpoint.api_key_env):
        raise MissingApiKeyError(f"key variable {endpoint.api_key_env!r} refused: {problem}")
    value = os.environ.get(endpoint.api_key_env, "")
    if not value:
        raise MissingApiKeyError(f"environment variable {endpoint.api_key_env} is not set")
    return value


_sessions: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, aiohttp.ClientSession] = (
    weakref.WeakKeyDictionary()
)


def _session() -> aiohttp.ClientSession:
    """The running loop's HTTP session for model calls (``egress_guard.guarded_session``)."""
    loop = asyncio.get_running_loop()
    session = _sessions.get(loop)
    if session is None or session.closed:
        from apps.endpoints.egress_guard import guarded_session

        session = _sessions[loop] = guarded_session()
    return session


# -- clients, one set per event loop -----------------------------------------------------------

_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[Any, ...], Any]] = (
    weakref.WeakKeyDictionary()
)


def _http_client(timeout_s: float) -> Any:
    """The SDK client's HTTP client (the batch interface's calls): aiohttp on the guarded
    session (``egress_guard.guarded_session``), redirects not followed (a model server does
    not redirect, and a redirect could lead inside)."""
    import openai
    from httpx_aiohttp.httpx2 import AiohttpTransport

    from apps.endpoints.egress_guard import guarded_session

    transport = AiohttpTransport(verify=tls_context(), client=guarded_session)
    return openai.DefaultAioHttpClient(
        timeout=timeout_s, transport=transport, follow_redirects=False
    )


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The TLS settings every client of this process verifies servers with: the SDK's own
    default (``httpx2.create_ssl_context()``), made once. Made for each client, it loaded
    the certificate bundle each time: 16-33 ms before a task's first request."""
    import httpx2

    return httpx2.create_ssl_context()


def client_for(endpoint: EndpointConfig, api_key: str) -> openai.AsyncOpenAI:
    """The cached client for this endpoint's URL, key and timeout in the running loop."""
    clients = _clients.setdefault(asyncio.get_running_loop(), {})
    digest = hashlib.sha256(api_key.encode()).hexdigest()
    key = (endpoint.base_url, digest, endpoint.timeout_s)
    if key not in clients:
        import openai

        clients[key] = openai.AsyncOpenAI(
            base_url=normal_url(endpoint.base_url),  # the host url_problem checked
            api_key=api_key,
            timeout=endpoint.timeout_s,
            max_retries=0,  # retries are ours (apps.endpoints.retry), never the client's
            http_client=_http_client(endpoint.timeout_s),
        )
    client: openai.AsyncOpenAI = clients[key]
    return client


async def close_clients() -> None:
    """Close the running loop's cached clients, limiters and Redis connection.

    Await it before an event loop ends (e.g. at the end of the coroutine a Celery task passes
    to ``asyncio.run``): the cached objects refer to their loop and would otherwise keep it.
    """
    loop = asyncio.get_running_loop()
    clients = _clients.pop(loop, {})
    for client in clients.values():
        await client.close()
    session = _sessions.pop(loop, None)
    if session is not None:
        await session.close()
    await limiters_close()


# -- one call ----------------------------------------------------------------------------------


def build_request(
    endpoint: EndpointConfig, messages: Messages, params: SamplingParams
) -> dict[str, Any]:
    """The JSON body for ``/chat/completions`` or ``/completions``."""
    request: dict[str, Any] = {"model": endpoint.model}
    if endpoint.api == "chat":
        if isinstance(messages, str):
            messages = [{"role": "user", "content": messages}]
        request["messages"] = [dict(m) for m in messages]
        request[endpoint.max_tokens_param] = params.max_tokens
        if params.logprobs:
            request["logprobs"] = True
            if params.top_logprobs is not None:
                request["top_logprobs"] = params.top_logprobs
    else:
        if not isinstance(messages, str):
            raise TypeError("the completions API takes a prompt string, not messages")
        request["prompt"] = messages
        request["max_tokens"] = params.max_tokens
        if params.logprobs:
            request["logprobs"] = params.top_logprobs or 0
    optional = {
        "temperature": params.temperature,
        "top_p": params.top_p,
        "seed": params.seed,
        "stop": list(params.stop) if params.stop else None,
    }
    request.update({k: v for k, v in optional.items() if v is not None})
    return request


def call_cache_key(endpoint: EndpointConfig, messages: Messages, params: SamplingParams) -> str:
    """``cache_key`` for this call: URL, model, API kind, all sampling params, input, sample."""
    sent = {k: v for k, v in vars(params).items() if k != "sample_index"}
    return cache_key(
        base_url=endpoint.base_url,
        model=endpoint.model,
        params={"api": endpoint.api, **sent},
        messages=messages,
        sample_index=params.sample_index,
    )


def _chat_logprobs(logprobs: Any) -> TokenLogprobs | None:
    if not logprobs or not logprobs.get("content"):
        return None
    return [
        {
            "token": item["token"],
            "logprob": item["logprob"],
            "top_logprobs": [
                {"token": t["token"], "logprob": t["logprob"]}
                for t in item.get("top_logprobs") or []
            ],
        }
        for item in logprobs["content"]
    ]


def _legacy_logprobs(logprobs: Any) -> TokenLogprobs | None:
    if not logprobs or not logprobs.get("tokens"):
        return None
    tokens = logprobs["tokens"]
    tops = logprobs.get("top_logprobs") or [None] * len(tokens)
    return [
        {
            "token": token,
            "logprob": logprob,
            "top_logprobs": [{"token": t, "logprob": lp} for t, lp in (top or {}).items()],
        }
        for token, logprob, top in zip(tokens, logprobs["token_logprobs"], tops, strict=False)
    ]


def _body(headers: Mapping[str, str], endpoint: EndpointConfig, content: bytes) -> dict[str, Any]:
    """The JSON object of a reply; InvalidResponse (or a ValueError, for a body that claims
    to be JSON and is not) otherwise."""
    expected = "ChatCompletion" if endpoint.api == "chat" else "Completion"
    content_type = headers.get("content-type", "").split(";")[0].strip()
    if not content_type.endswith("json"):
        raise InvalidResponse(f"expected a JSON {expected}, got {content_type or 'no type'}")
    data = json.loads(content)
    if not isinstance(data, dict):
        raise InvalidResponse(f"expected a JSON {expected}, got {type(data).__name__}")
    return data


def _provider_error(data: dict[str, Any]) -> str | None:
    """The provider's own words when a 2xx body carries an error instead of a completion."""
    error = data.get("error")
    if isinstance(error, dict):
        message = error.get("message") or error.get("type") or error.get("code")
        return str(message or json.dumps(error)[:500])
    if isinstance(error, str) and error:
        return error
    return None


def read_completion(data: dict[str, Any], endpoint: EndpointConfig) -> CallOutcome:
    """The useful parts of a completion; InvalidResponse if it is not one."""
    message = _provider_error(data)
    if message is not None:
        raise InvalidResponse(f"the provider answered with an error: {message}")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        shown = "no 'choices'" if choices is None else f"'choices' is {json.dumps(choices)[:80]}"
        raise InvalidResponse(f"not a completion: {shown} in the reply")
    choice = choices[0]
    field_name = "message" if endpoint.api == "chat" else "text"
    if not isinstance(choice, dict) or choice.get(field_name) is None:
        raise InvalidResponse(f"not a completion: the first choice has no '{field_name}'")
    try:
        if endpoint.api == "chat":
            text = choice["message"].get("content")
            logprobs = _chat_logprobs(choice.get("logprobs"))
        else:
            text = choice["text"]
            logprobs = _legacy_logprobs(choice.get("logprobs"))
        usage = data.get("usage") or {}
        return CallOutcome(
            ok=True,
            text=text or "",
            prompt_tokens=usage.get("prompt_tokens"),
            completion_tokens=usage.get("completion_tokens"),
            system_fingerprint=data.get("system_fingerprint"),
            model=data.get("model"),
            finish_reason=choice.get("finish_reason"),
            logprobs=logprobs,
        )
    except (AttributeError, IndexError, KeyError, TypeError) as exc:
        raise InvalidResponse(f"malformed completion: {type(exc).__name__}: {exc}") from exc


async def _attempt(
    session: aiohttp.ClientSession, endpoint: EndpointConfig, api_key: str, request: dict[str, Any]
) -> CallOutcome:
    """One HTTP attempt: the body POSTed as JSON with the key as a bearer token, the reply
    read whole. A non-2xx status is ``HttpStatusError``, a failed connection
    ``HttpConnectionError``; the deadline covers connect + send + receive (a server that
    drips its reply ends at the judge's timeout)."""
    url = _url(endpoint)
    headers = {"Authorization": f"Bearer {api_key}", "Accept": "application/json"}
    try:
        async with asyncio.timeout(endpoint.timeout_s):
            async with session.post(
                url, json=request, headers=headers, allow_redirects=False
            ) as response:
                content = await response.read()
    except TimeoutError as exc:
        raise AttemptDeadline(endpoint.timeout_s) from exc
    except aiohttp.ClientError as exc:
        raise HttpConnectionError(f"connection error: {type(exc).__name__}") from exc
    if not 200 <= response.status < 300:
        raise HttpStatusError(response.status, response.headers, content)
    outcome = read_completion(_body(response.headers, endpoint, content), endpoint)
    return replace(outcome, request_id=response.headers.get("x-request-id"))


@functools.lru_cache(maxsize=256)
def _url(endpoint: EndpointConfig) -> str:
    path = "chat/completions" if endpoint.api == "chat" else "completions"
    return f"{normal_url(endpoint.base_url).rstrip('/')}/{path}"


KEY_MASK = "***"


def mask_key(text: str | None, secret: str) -> str | None:
    """``text`` with every occurrence of the endpoint's key replaced by "***".

    Applied to the reply text and the error message of every outcome ``complete`` returns, so
    a server that echoes the Authorization header, or an error that quotes the key, is never
    stored, logged or exported with it. ``secret`` is "" for a keyless endpoint.
    """
    if not text or not secret:
        return text
    return text.replace(secret, KEY_MASK)


def _failed(failure: Failure, secret: str, **fields: Any) -> CallOutcome:
    return CallOutcome(
        ok=False,
        error_kind=failure.kind,
        error_message=mask_key(failure.message, secret),
        status_code=failure.status_code,
        request_id=failure.request_id,
        **fields,
    )


async def complete(
    endpoint: EndpointConfig,
    messages: Messages,
    params: SamplingParams,
    *,
    limiter: EndpointLimiter | None = None,
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    rng: random.Random | None = None,
    on_attempt: Callable[[], Awaitable[None]] | None = None,
) -> CallOutcome:
    """One call with bounded retries; a failed ``CallOutcome`` instead of exceptions.

    ``limiter``: the endpoint's limiter in this loop unless given (``limiter_for``).
    ``on_attempt`` is awaited just before each HTTP attempt is sent, holding its slot (a judge
    run's request counter: an attempt abandoned at cancel or kill was still received by the
    server)."""
    started = time.perf_counter()
    if problem := egress_policy().url_problem(endpoint.base_url):  # literal addresses
        return _failed(Failure("config", problem, transient=False), "", total_s=0.0)
    try:
        api_key = resolve_api_key(endpoint)
    except MissingApiKeyError as exc:
        return _failed(Failure("config", str(exc), transient=False), "", total_s=0.0)
    secret = api_key if endpoint.api_key_env else ""  # never the keyless placeholder
    request = build_request(endpoint, messages, params)
    session = _session()
    limiter = limiter or limiter_for(endpoint)
    policy = endpoint.retry
    latency = 0.0

    async def attempt() -> CallOutcome | Failure:
        """One HTTP attempt, holding a slot of the limiter (released while waiting to retry)."""
        nonlocal latency
        async with limiter.slot():
            if on_attempt is not None:
                await on_attempt()
            started_at = time.perf_counter()
            try:
                outcome: CallOutcome | Failure = await _attempt(session, endpoint, api_key, request)
            except Exception as exc:
                failure = classify(exc, policy)
                if failure is None:
                    raise
                outcome = failure
            latency = time.perf_counter() - started_at
        return outcome

    result: CallOutcome | Failure = await attempt()
    attempts = 1
    if isinstance(result, Failure):  # the retry loop is entered with the first failure
        retrying = _retrying(endpoint, rng, sleep)
        result = await retrying(_again(result, attempt))
        attempts = retrying.statistics.get("attempt_number", 1)
    total = time.perf_counter() - started
    if isinstance(result, CallOutcome):
        text = mask_key(result.text, secret)
        return replace(result, text=text, latency_s=latency, total_s=total, attempts=attempts)
    failure = _final(result, policy, attempts)
    logger.warning(
        "LLM call to %s (%s) failed after %d attempt(s): %s",
        endpoint.limit_key,
        endpoint.model,
        attempts,
        failure.kind,
    )
    return _failed(failure, secret, latency_s=latency, total_s=total, attempts=attempts)


def _again(
    first: Failure, attempt: Callable[[], Awaitable[CallOutcome | Failure]]
) -> Callable[[], Awaitable[CallOutcome | Failure]]:
    """``attempt`` whose first call returns ``first``, the failure already met: the retry
    loop counts it as attempt 1 and decides from it (a success costs no retry machinery)."""
    met = [first]

    async def again() -> CallOutcome | Failure:
        return met.pop() if met else await attempt()

    return again


def _retrying(
    endpoint: EndpointConfig,
    rng: random.Random | None,
    sleep: Callable[[float], Awaitable[Any]],
) -> tenacity.AsyncRetrying:
    """The retry loop of one call (``complete``): an attempt that returns a ``Failure`` is
    tried again after ``_retry_delay``, until that says to give up; the last result (an
    outcome, or the last failure) is the call's."""
    policy = endpoint.retry
    delays: dict[int, float | None] = {}  # tenacity asks twice (stop? then wait): drawn once

    def delay(state: tenacity.RetryCallState) -> float | None:
        if state.attempt_number not in delays:
            failure = state.outcome.result() if state.outcome else None
            assert isinstance(failure, Failure)
            delays[state.attempt_number] = _retry_delay(failure, policy, state.attempt_number, rng)
        return delays[state.attempt_number]

    def waited(state: tenacity.RetryCallState) -> None:
        failure = state.outcome.result() if state.outcome else None
        logger.info(
            "LLM call to %s (%s) attempt %d: %s (HTTP %s); retrying in %.2fs",
            endpoint.limit_key,
            endpoint.model,
            state.attempt_number,
            getattr(failure, "kind", "?"),
            getattr(failure, "status_code", None),
            state.upcoming_sleep,
        )

    return tenacity.AsyncRetrying(
        retry=tenacity.retry_if_result(lambda result: isinstance(result, Failure)),
        stop=lambda state: delay(state) is None,
        wait=lambda state: delay(state) or 0.0,
        sleep=sleep,
        before_sleep=waited,
        retry_error_callback=lambda state: state.outcome.result() if state.outcome else None,
    )


def _final(failure: Failure, policy: RetryPolicy, attempt: int) -> Failure:
    """The failure as reported: why no further attempt was made, when that is not obvious."""
    wait = failure.retry_after_s
    if failure.transient and wait is not None and wait > policy.max_retry_after_s:
        note = (
            f"the server asked to retry after {wait:g} s, beyond the "
            f"{policy.max_retry_after_s:g} s we wait at most"
        )
    elif failure.transient and attempt > 1:
        note = f"gave up after {attempt} attempts"
    else:
        return failure
    return replace(failure, message=f"{failure.message} ({note})")


def _retry_delay(
    failure: Failure, policy: RetryPolicy, attempt: int, rng: random.Random | None
) -> float | None:
    """Seconds to wait before the next attempt, or None to give up (a permanent failure, the
    last attempt, or a Retry-After longer than we wait)."""
    if not failure.transient or attempt >= policy.max_attempts:
        return None
    if failure.retry_after_s is None:
        return backoff_delay(policy, attempt, rng)
    if failure.retry_after_s > policy.max_retry_after_s:
        return None
    # Honour Retry-After; a little extra jitter keeps many waiting calls from stampeding.
    return failure.retry_after_s * (1.0 + (rng or random).uniform(0.0, 0.1))
