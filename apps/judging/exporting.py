"""A run's calls as CSV or JSONL, one row per call, streamed (see docs/judging.md)."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from typing import Any

from apps.csv_cells import SafeDictWriter
from apps.judging.models import JudgeCall, JudgeRun
from apps.judging.selectors import calls_for_export

COLUMNS = [
    "run",
    "call",
    "judge",
    "strategy",
    "strategy_version",
    "item",
    "perturbation",
    "kind",
    "candidate",
    "criterion",
    "aspect",
    "metric",
    "sample_index",
    "original_first",
    "parse_status",
    "score",
    "verdict",
    "preferred",
    "parse_reason",
    "raw_response",
    "error_kind",
    "error",
    "cached",
    "cache_key",
    "prompt_tokens",
    "completion_tokens",
    "latency",
    "attempts",
    "request_id",
    "system_fingerprint",
    "response_model",
    "format_retry",
    "request",
]


def call_row(run: JudgeRun, call: JudgeCall) -> dict[str, Any]:
    perturbation = call.perturbation
    return {
        "run": run.pk,
        "call": call.pk,
        "judge": run.judge.name,
        "strategy": run.strategy.slug if run.strategy else "",
        "strategy_version": run.strategy.version if run.strategy else None,
        "item": call.item.external_id,
        "perturbation": (perturbation.external_id or perturbation.pk) if perturbation else None,
        "kind": perturbation.kind.slug if perturbation else None,
        "candidate": call.candidate_id,  # an adversarial search's candidate text
        "criterion": call.criterion.key if call.criterion else None,
        "aspect": call.criterion.aspect.slug if call.criterion else None,
        "metric": call.metric.slug if call.metric else None,
        "sample_index": call.sample_index,
        "original_first": call.original_first,
        "parse_status": call.parse_status,
        "score": call.score,
        "verdict": call.verdict or None,
        "preferred": call.preferred or None,
        "parse_reason": call.parse_reason,
        "raw_response": call.raw_response,
        "error_kind": call.error_kind or None,
        "error": call.error or None,
        "cached": call.cached,
        "cache_key": call.cache_key,
        "prompt_tokens": call.prompt_tokens,
        "completion_tokens": call.completion_tokens,
        "latency": call.latency,
        "attempts": call.attempts,
        "request_id": call.request_id or None,
        "system_fingerprint": call.system_fingerprint or None,
        "response_model": call.response_model or None,
        "format_retry": call.format_retry,
        "request": call.request,
    }


def export_jsonl(run: JudgeRun) -> Iterator[str]:
    for call in calls_for_export(run).iterator(chunk_size=1000):
        yield json.dumps(call_row(run, call), ensure_ascii=False) + "\n"


def _csv_value(value: Any) -> Any:
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    return "" if value is None else value


def export_csv(run: JudgeRun) -> Iterator[str]:
    buffer = io.StringIO()
    writer = SafeDictWriter(buffer, fieldnames=COLUMNS)
    writer.writeheader()
    for call in calls_for_export(run).iterator(chunk_size=1000):
        writer.writerow({k: _csv_value(v) for k, v in call_row(run, call).items()})
        if buffer.tell() > 64_000:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
    yield buffer.getvalue()


EXPORTS = {"jsonl": (export_jsonl, "application/x-ndjson"), "csv": (export_csv, "text/csv")}
