"""Filling a JudgeCall from what happened: a reply, a cached reply, an error, a metric score.

Nothing here touches the database; the engine saves the filled calls in batches.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from apps.endpoints.runner import Answer
from apps.judging.metric_judges import MetricScore
from apps.judging.models import JudgeCall, ParseStatus
from apps.judging.parsers import ParseResult
from apps.judging.scoring import ReplyReader, preferred_text

#: Columns a cached call copies from the call whose reply it reuses.
CACHE_COLUMNS = (
    "id",
    "cache_key",
    "raw_response",
    "logprobs",
    "format_retry",
    "prompt_tokens",
    "completion_tokens",
    "request_id",
    "system_fingerprint",
    "response_model",
    "finish_reason",
)


def _set_parse(call: JudgeCall, result: ParseResult) -> None:
    call.parse_status = ParseStatus.PARSED if result.parsed else ParseStatus.UNPARSED
    call.parse_reason = result.reason
    call.score = result.score
    call.verdict = result.verdict or ""
    call.preferred = preferred_text(result.verdict, call.original_first)


def _read_with_retry(
    call: JudgeCall, reader: ReplyReader, text: str, logprobs: Any, retry: dict[str, Any] | None
) -> None:
    result = reader.read(text, logprobs)
    if not result.parsed and retry is not None and reader.format_retry:
        second = reader.read(retry.get("raw_response") or "", retry.get("logprobs"))
        if second.parsed:
            result = replace(second, reason=f"{second.reason} (after a format reminder)")
        else:
            result = replace(
                result, reason=f"{result.reason}; after a format reminder: {second.reason}"
            )
    _set_parse(call, result)


def _retry_record(reply: Answer, reader: ReplyReader) -> dict[str, Any] | None:
    second = reply.retry
    if second is None:
        return None
    return {
        "reminder": reader.reminder,
        "raw_response": second.text or "",
        "logprobs": second.logprobs if reader.use_logprobs else None,
        "ok": second.ok,
        "error": second.error_message or "",
        "attempts": second.attempts,
        "prompt_tokens": second.prompt_tokens,
        "completion_tokens": second.completion_tokens,
        "request_id": second.request_id,
        "latency": second.latency_s,
    }


def fill_from_reply(call: JudgeCall, reply: Answer, reader: ReplyReader) -> None:
    outcome = reply.outcome
    assert outcome is not None, "an ask never asked fills nothing"
    call.attempts = outcome.attempts
    call.latency = outcome.latency_s
    call.total_seconds = outcome.total_s
    call.request_id = outcome.request_id or ""
    call.system_fingerprint = outcome.system_fingerprint or ""
    call.response_model = outcome.model or ""
    call.finish_reason = outcome.finish_reason or ""
    call.prompt_tokens = outcome.prompt_tokens
    call.completion_tokens = outcome.completion_tokens
    call.cached = False
    if not outcome.ok:
        fill_error(call, kind=outcome.error_kind or "error", message=outcome.error_message or "")
        if outcome.status_code is not None:
            call.error = f"HTTP {outcome.status_code}: {call.error}"
        return
    call.raw_response = outcome.text or ""
    call.logprobs = outcome.logprobs if reader.use_logprobs else None
    call.format_retry = _retry_record(reply, reader)
    call.error_kind = call.error = ""
    _read_with_retry(call, reader, call.raw_response, call.logprobs, call.format_retry)


def fill_from_cache(call: JudgeCall, source: dict[str, Any], reader: ReplyReader) -> None:
    """Reuse a stored reply (never an error): no HTTP request was made for this call."""
    call.cached = True
    call.cached_from_id = source["id"]
    for column in CACHE_COLUMNS[1:]:
        setattr(call, column, source[column])
    call.attempts = 0
    call.latency = call.total_seconds = None
    call.error_kind = call.error = ""
    _read_with_retry(call, reader, call.raw_response, call.logprobs, call.format_retry)


def fill_error(call: JudgeCall, *, kind: str, message: str) -> None:
    call.parse_status = ParseStatus.ERROR
    call.error_kind = kind
    call.error = message
    call.score = None
    call.verdict = call.preferred = call.parse_reason = ""


def fill_metric(
    call: JudgeCall, metric: str, result: MetricScore, reference: str = "original"
) -> None:
    """``reference`` names what the text was compared with: "original", or "reference" (an
    item's own reference, for an adversarial search's candidates)."""
    call.request = {"metric": metric, "reference": reference, "scale": [0, 100]}
    call.raw_response = result.detail
    call.parse_status = ParseStatus.PARSED
    call.parse_reason = f"{metric} against the {reference}"
    call.score = result.score
    call.attempts = 0
