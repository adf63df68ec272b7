"""An audit's report cards in the shape of promptfoo's results file (``promptfoo eval -o
results.json``: ``evalId``, ``results`` as its ``EvaluateSummary`` version 3, ``config``,
``shareableUrl``), so that a lab's scripts and viewers that read promptfoo's output read
Discern's verdicts too (docs/audit.md, "In CI").

Each audited judge and strategy is one prompt (a column of promptfoo's table); each verdict
line, and each figure tested against a saved card, is one result (a row, the same question
lined up across judges by ``testIdx``). The outcomes are ``outcomes``' own: a pass is a
success, a failure a failure (``failureReason`` 1), an error an error (``failureReason`` 2);
a skipped line (the card could not decide) is kept with ``success: false``, ``failureReason``
0 and ``metadata.outcome: "skipped"``, and ``stats`` counts it in none of its three counts.
"""

from __future__ import annotations

import json
from datetime import UTC
from typing import Any

from apps.analysis.cards.baseline import BaselineResult
from apps.analysis.cards.outcomes import (
    ERROR,
    FAILED,
    PASSED,
    AuditCases,
    Case,
    SubjectCases,
    audit_cases,
)
from apps.analysis.cards.verdict_lines import ALL
from apps.judging.models.audit import AuditSubject, JudgeAudit

CONTENT_TYPE = "application/json"
#: promptfoo's ResultFailureReason: NONE, ASSERT, ERROR.
_FAILURE_REASON = {FAILED: 1, ERROR: 2}


def _provider(subject: SubjectCases) -> dict[str, str]:
    return {"id": f"discern:judge:{subject.judge_id}", "label": subject.label}


def _prompt(subject: SubjectCases) -> dict[str, str]:
    return {"raw": subject.strategy or "metric", "label": subject.strategy_name or "metric"}


def _token_usage(subjects: list[SubjectCases]) -> dict[str, int]:
    prompt = sum(s.runs.prompt_tokens for s in subjects)
    completion = sum(s.runs.completion_tokens for s in subjects)
    return {
        "total": prompt + completion,
        "prompt": prompt,
        "completion": completion,
        # promptfoo counts tokens its cache answered; Discern counts cached calls, no tokens
        "cached": 0,
        "numRequests": sum(s.runs.http_requests for s in subjects),
    }


def _named_scores(case: Case) -> dict[str, float]:
    """The figure's value under its key (a scoped line: "key: scope")."""
    value = case.figures.get("value", case.figures.get("difference"))
    if not isinstance(value, int | float):
        return {}
    name = case.key if case.scope == ALL else f"{case.key}: {case.scope}"
    return {name: float(value)}


def _result(subject: SubjectCases, case: Case, prompt_idx: int, test_idx: int) -> dict[str, Any]:
    success = case.outcome == PASSED
    score = 1.0 if success else 0.0
    named = _named_scores(case)
    test_vars = {
        "judge": subject.judge,
        "strategy": subject.strategy,
        "figure": case.key,
        "scope": case.scope,
        "part": case.part,
    }
    grading = {"pass": success, "score": score, "reason": case.sentence, "namedScores": named}
    return {
        "description": case.name,
        "promptIdx": prompt_idx,
        "testIdx": test_idx,
        "promptId": f"discern-subject-{subject.id}",
        "provider": _provider(subject),
        "prompt": _prompt(subject),
        "vars": test_vars,
        "testCase": {"description": case.name, "vars": test_vars},
        "response": {"output": case.sentence},
        "error": case.sentence if case.outcome == ERROR else None,
        "failureReason": _FAILURE_REASON.get(case.outcome, 0),
        "success": success,
        "score": score,
        "latencyMs": 0,
        "namedScores": named,
        "gradingResult": grading | {"componentResults": [dict(grading)]},
        "metadata": {"outcome": case.outcome, "verdict": case.verdict} | case.figures,
    }


def _metrics(subject: SubjectCases) -> dict[str, Any]:
    """promptfoo's per-prompt metrics, for its table's column header."""
    named: dict[str, float] = {}
    for case in subject.cases:
        named |= _named_scores(case)
    passed, failed = subject.count(PASSED), subject.count(FAILED)
    return {
        "score": float(passed),
        "testPassCount": passed,
        "testFailCount": failed,
        "testErrorCount": subject.count(ERROR),
        "assertPassCount": passed,
        "assertFailCount": failed,
        "totalLatencyMs": round((subject.runs.seconds or 0) * 1000),
        "tokenUsage": _token_usage([subject]),
        "namedScores": named,
        "namedScoresCount": dict.fromkeys(named, 1),
        "cost": float(subject.cost_usd or 0),
    }


def promptfoo_results(cases: AuditCases) -> dict[str, Any]:
    """The cases as promptfoo's results file."""
    rows: dict[tuple[str, str, str], int] = {}
    results = []
    for prompt_idx, subject in enumerate(cases.subjects):
        for case in subject.cases:
            test_idx = rows.setdefault((case.part, case.key, case.scope), len(rows))
            results.append(_result(subject, case, prompt_idx, test_idx))
    stats: dict[str, Any] = {
        "successes": cases.count(PASSED),
        "failures": cases.count(FAILED),
        "errors": cases.count(ERROR),
        "tokenUsage": _token_usage(cases.subjects),
    }
    if cases.seconds is not None:
        stats["durationMs"] = round(cases.seconds * 1000)
    prompts = [
        _prompt(s) | {"provider": _provider(s)["id"], "metrics": _metrics(s)}
        for s in cases.subjects
    ]
    return {
        "evalId": f"discern-audit-{cases.id}",
        "results": {
            "version": 3,
            "timestamp": cases.timestamp.astimezone(UTC).isoformat().replace("+00:00", "Z"),
            "results": results,
            "prompts": prompts,
            "stats": stats,
        },
        "config": {"description": f"Discern audit {cases.id}: {cases.label} ({cases.where})"},
        "shareableUrl": None,
    }


def audit_promptfoo_text(
    audit: JudgeAudit,
    *,
    subject: AuditSubject | None = None,
    gate: BaselineResult | None = None,
) -> str:
    """The audit's cards (one subject's, when given) as promptfoo's results JSON: what the
    pages' download, the API and ``judge_audit --promptfoo`` write."""
    cases = audit_cases(audit, subject=subject, gate=gate)
    return json.dumps(promptfoo_results(cases), indent=2) + "\n"
