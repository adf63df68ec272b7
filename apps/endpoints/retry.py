"""Our one retry layer for LLM calls: which failures are transient, and how long to wait
(the loop that asks again is tenacity's: ``apps.endpoints.client._retrying``).

Model calls (``client._attempt``) raise ``HttpStatusError`` and ``HttpConnectionError``; the
batch interface's calls go through the openai SDK, built with ``max_retries=0``, and raise its
errors, which are read the same way. Retries happen only here:

- transient: HTTP 429, 408, 5xx, timeouts and connection errors (a server's
  ``x-should-retry`` header overrides the status rule, as the official client does);
- permanent: every other 4xx, and replies that are not a chat completion (invalid JSON,
  HTML from a proxy) unless ``RetryPolicy.retry_invalid_response`` is set;
- the wait is the server's ``Retry-After`` (seconds or HTTP-date; ``retry-after-ms`` first)
  when given, else exponential backoff with full jitter: ``uniform(0, min(cap, base * 2**k))``.
"""

from __future__ import annotations

import email.utils
import json
import math
import random
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal, TypeVar

from apps.endpoints.egress import EgressRefused

E = TypeVar("E", bound=BaseException)
ErrorKind = Literal[
    "rate_limited",  # 429
    "server_error",  # 5xx
    "timeout",  # no answer in time (client timeout or HTTP 408)
    "connection",  # refused, reset, dropped without a response
    "auth",  # 401 / 403
    "client_error",  # any other 4xx: the request itself is wrong
    "invalid_response",  # 2xx whose body is not a usable completion
    "config",  # our side: e.g. the API key's environment variable is not set
]


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    max_attempts: int = 5  # attempts in all, the first one included
    base_backoff_s: float = 0.5
    max_backoff_s: float = 30.0
    max_retry_after_s: float = 120.0  # a longer Retry-After ends the call at once
    retry_invalid_response: bool = False

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        if self.base_backoff_s < 0 or self.max_backoff_s < 0:
            raise ValueError("backoff times cannot be negative")


@dataclass(frozen=True, slots=True)
class Failure:
    """What went wrong in one attempt."""

    kind: ErrorKind
    message: str
    transient: bool
    status_code: int | None = None
    retry_after_s: float | None = None
    request_id: str | None = None


def _header(headers: Mapping[str, str], name: str) -> str | None:
    value = headers.get(name)
    if value is None:  # plain dicts are case-sensitive; httpx headers are not
        lowered = {k.lower(): v for k, v in headers.items()}
        value = lowered.get(name)
    return value


def retry_after_seconds(headers: Mapping[str, str], now: datetime | None = None) -> float | None:
    """Seconds to wait per ``retry-after-ms`` / ``Retry-After`` (delta-seconds or HTTP-date)."""
    millis = _header(headers, "retry-after-ms")
    if millis is not None:
        try:
            value = float(millis) / 1000.0
        except ValueError:
            value = math.nan
        if math.isfinite(value) and value >= 0:
            return value
    raw = _header(headers, "retry-after")
    if raw is None or not raw.strip():
        return None
    try:
        value = float(raw)
    except ValueError:
        pass
    else:
        return value if math.isfinite(value) and value >= 0 else None
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def backoff_delay(policy: RetryPolicy, attempt: int, rng: random.Random | None = None) -> float:
    """Full-jitter wait after the ``attempt``-th failed attempt (1-based)."""
    ceiling = min(policy.max_backoff_s, policy.base_backoff_s * 2 ** (attempt - 1))
    return (rng or random).uniform(0.0, ceiling)


def status_kind(status: int) -> ErrorKind:
    """What an HTTP error status means for a call."""
    if status == 429:
        return "rate_limited"
    if status == 408:
        return "timeout"
    if status >= 500:
        return "server_error"
    if status in (401, 403):
        return "auth"
    return "client_error"


def _status_failure(status: int, headers: Mapping[str, str], content: bytes) -> Failure:
    should_retry = (_header(headers, "x-should-retry") or "").lower()
    kind = status_kind(status)
    transient = kind in ("rate_limited", "timeout", "server_error")
    if should_retry in ("true", "false"):
        transient = should_retry == "true"
    return Failure(
        kind=kind,
        message=provider_message(content),
        transient=transient,
        status_code=status,
        retry_after_s=retry_after_seconds(headers),
        request_id=_header(headers, "x-request-id"),
    )


def provider_message(content: bytes, limit: int = 500) -> str:
    """The provider's own words in an error reply, in the shapes model servers use
    (``{"error": {"message": ...}}``, ``{"error": "..."}``, ``{"message": ...}``,
    ``{"detail": "..."}``). Anything else is not shown: a server that is not a model server
    (a database, a metadata service) must not have its reply copied to the researcher."""
    try:
        body = json.loads(content)
    except ValueError:
        body = None
    words: Any = None
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict):
            error = error.get("message")
        words = next(
            (w for w in (error, body.get("message"), body.get("detail")) if isinstance(w, str)),
            None,
        )
    if not words:
        return "the reply is not an OpenAI-compatible error; its body is not shown"
    return words if len(words) <= limit else words[:limit] + "…"


def classify(error: BaseException, policy: RetryPolicy) -> Failure | None:
    """A ``Failure`` for errors an LLM call can meet; None for anything else (a bug: re-raise).

    The SDK's errors are looked at only once something imported the SDK (a caller of the
    batch interface): importing it here took a second, in the loop, at a worker's first failed
    call, and held up every other call of that loop."""
    openai = sys.modules.get("openai")
    if isinstance(error, HttpStatusError):
        return _status_failure(error.status_code, error.headers, error.content)
    if openai is not None and isinstance(error, openai.APIStatusError):
        response = error.response
        return _status_failure(error.status_code, response.headers, response.content)
    if refused := _cause(error, EgressRefused):  # raised as is, or in the HTTP client
        return Failure("config", str(refused), transient=False)
    if isinstance(error, AttemptDeadline):
        return Failure("timeout", str(error), transient=True)
    if openai is not None and isinstance(error, openai.APITimeoutError) and not _refused(error):
        return Failure("timeout", "request timed out", transient=True)
    if isinstance(error, HttpConnectionError):
        return Failure("connection", str(error), transient=True)
    if openai is not None and isinstance(error, openai.APIConnectionError):
        cause = error.__cause__ or error.__context__
        detail = f": {type(cause).__name__}" if cause is not None else ""
        return Failure("connection", f"{error.message}{detail}", transient=True)
    sdk_invalid = openai is not None and isinstance(error, openai.APIResponseValidationError)
    if sdk_invalid or isinstance(error, ValueError):
        # json.JSONDecodeError and UnicodeDecodeError are ValueErrors: an undecodable body.
        return Failure(
            "invalid_response",
            f"response body is not valid JSON for a completion: {error}",
            transient=policy.retry_invalid_response,
        )
    if isinstance(error, InvalidResponse):
        return Failure("invalid_response", str(error), transient=policy.retry_invalid_response)
    return None


def _refused(error: BaseException) -> bool:
    """A connection that failed outright, not slowly: the aiohttp transport reports a refused
    connection as a connect timeout, with the ``ConnectionError`` as its cause."""
    return _cause(error.__cause__ or error.__context__, ConnectionError) is not None


def _cause(error: BaseException | None, kind: type[E]) -> E | None:
    """``error`` or the first of its causes that is a ``kind``."""
    for _ in range(10):  # a cause chain is short; never loop on a cycle
        if error is None or isinstance(error, kind):
            return error
        error = error.__cause__ or error.__context__
    return None


class InvalidResponse(Exception):
    """A 2xx reply that is not a usable completion (e.g. HTML, no choices)."""


class HttpStatusError(Exception):
    """A reply whose HTTP status is not 2xx."""

    def __init__(self, status_code: int, headers: Mapping[str, str], content: bytes) -> None:
        super().__init__(f"HTTP {status_code}")
        self.status_code, self.headers, self.content = status_code, headers, content


class HttpConnectionError(Exception):
    """The request or its reply did not get through (refused, reset, dropped)."""


class AttemptDeadline(Exception):
    """An attempt (connect + send + receive) ran past the judge's timeout."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"no complete reply within the judge's timeout of {seconds:g} s")
