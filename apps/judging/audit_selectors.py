"""Judge audit reads: whose audits a user reaches (their own; superusers all; anyone else a
404 whatever the id), and what the audit page shows (docs/audit.md)."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from apps.judging.models import AuditPart, CallBatch, JudgeAudit, PartKind


def audits_for_user(user: Any) -> QuerySet[JudgeAudit]:
    return JudgeAudit.objects.for_user(user).select_related("study", "dataset", "owner")


def audit_for_user(user: Any, pk: int) -> JudgeAudit:
    return get_object_or_404(audits_for_user(user), pk=pk)


def audit_parts(audit: JudgeAudit) -> list[AuditPart]:
    """Its parts in battery order, subject by subject, with their runs and searches."""
    order = {kind: i for i, kind in enumerate(PartKind.values)}
    parts = AuditPart.objects.filter(subject__audit=audit).select_related(
        "subject__judge", "subject__strategy", "run", "baseline", "search"
    )
    return sorted(parts, key=lambda p: (p.subject_id, order[p.part]))


def audit_context(audit: JudgeAudit) -> dict[str, Any]:
    """The audit, its subjects with their parts in battery order, and the live counters."""
    parts = audit_parts(audit)
    subjects: dict[int, dict[str, Any]] = {}
    for part in parts:
        entry = subjects.setdefault(part.subject_id, {"subject": part.subject, "parts": []})
        entry["parts"].append(part)
    left_out: dict[str, int] = {}
    seen: set[int] = set()
    for part in parts:
        if part.run is not None and part.run.pk not in seen:
            seen.add(part.run.pk)
            for problem in part.run.problems:
                reason = problem.get("reason", "")
                left_out[reason] = max(left_out.get(reason, 0), problem.get("count", 0))
    progress = audit.progress()
    done = progress["done"] + progress["failed"]
    percent = int(100 * done / progress["total"]) if progress["total"] else 0
    return {
        "audit": audit,
        "subjects": list(subjects.values()),
        "progress": progress,
        "percent": percent,
        "estimate": audit.estimate,
        #: what the runs left out and why (e.g. unvetted perturbations), the most per reason
        "left_out": sorted(left_out.items(), key=lambda kv: -kv[1]),
        #: the batches its runs sent through a batch interface
        "batches": list(
            CallBatch.objects.filter(run_id__in=seen).select_related("run").order_by("id")
        ),
    }
