"""Report cards and comparisons on demand (docs/cards.md): served from a snapshot while the
audit's inputs are unchanged, rebuilt when they change. Checking costs the same few queries
however many runs an audit holds; ``audit_json`` is what the page's download and
``manage.py judge_audit --json`` both write."""

from __future__ import annotations

import hashlib
import json
import time
from typing import Any

from django.db.models import Count, Max, Sum

from apps.analysis.cards.card import build_card
from apps.analysis.cards.comparison import build_comparison, subjects_of
from apps.analysis.models import AuditReport
from apps.analysis.reports.base import Report
from apps.analysis.selectors import verdict_thresholds
from apps.analysis.services import inputs_fingerprint
from apps.judging.models import JudgeRun, SearchItem
from apps.judging.models.audit import AuditPart, AuditSubject, JudgeAudit

#: Part of every fingerprint: raise it when what a card computes changes (2: the verdict,
#: intervals over texts, every figure defined once; 3: tables that fit the page).
CARD_FORMAT = 3


def audit_fingerprint(audit: JudgeAudit) -> str:
    """Changes whenever anything a card or the comparison of this audit reads changes: its
    parts, their runs' counters, their searches' items and the study's human data."""
    parts = list(
        AuditPart.objects.filter(subject__audit=audit)
        .order_by("pk")
        .values_list("pk", "part", "run_id", "search_id", "skipped_reason")
    )
    runs = [p[2] for p in parts if p[2]]
    searches = [p[3] for p in parts if p[3]]
    counters = JudgeRun.objects.filter(pk__in=runs).aggregate(
        done=Sum("done"),
        failed=Sum("failed"),
        unscored=Sum("unscored"),
        finished=Max("finished_at"),
        n=Count("id"),
    )
    searched = SearchItem.objects.filter(search_id__in=searches).aggregate(
        n=Count("id"), last=Max("updated_at")
    )
    state: list[Any] = [CARD_FORMAT, parts, counters, searched]
    if audit.study is not None:
        state.append(inputs_fingerprint(audit.study))
        state.append(sorted(verdict_thresholds(audit.study).items()))
    return hashlib.sha256(json.dumps(state, default=str).encode()).hexdigest()


def _current(audit: JudgeAudit, subject: AuditSubject | None, fingerprint: str) -> Report:
    snapshot = AuditReport.objects.filter(audit=audit, subject=subject).first()
    if snapshot is not None and snapshot.fingerprint == fingerprint:
        return Report.from_dict(snapshot.payload)
    started = time.perf_counter()
    report = build_card(subject) if subject is not None else build_comparison(audit)
    AuditReport.objects.update_or_create(
        audit=audit,
        subject=subject,
        defaults={
            "fingerprint": fingerprint,
            "payload": report.as_dict(),
            "seconds": round(time.perf_counter() - started, 3),
        },
    )
    return report


def card_get(subject: AuditSubject, fingerprint: str | None = None) -> Report:
    """The subject's report card, current with its audit's data."""
    audit = subject.audit
    return _current(audit, subject, fingerprint or audit_fingerprint(audit))


def comparison_get(audit: JudgeAudit, fingerprint: str | None = None) -> Report:
    """The audit's judges side by side, current with its data."""
    return _current(audit, None, fingerprint or audit_fingerprint(audit))


def audit_json(audit: JudgeAudit) -> dict[str, Any]:
    """The whole audit as plain JSON: every subject's card and the comparison."""
    fingerprint = audit_fingerprint(audit)
    subjects = subjects_of(audit)
    return {
        "audit": {
            "id": audit.pk,
            "label": audit.label,
            "status": audit.status,
            "study": audit.study.name if audit.study else None,
            "dataset": audit.dataset.name if audit.dataset else None,
        },
        "cards": [
            {
                "subject": {
                    "id": s.pk,
                    "label": str(s),
                    "judge": s.judge.name,
                    "strategy": s.strategy.slug if s.strategy else None,
                },
                "card": card_get(s, fingerprint).as_dict(),
            }
            for s in subjects
        ],
        "comparison": comparison_get(audit, fingerprint).as_dict(),
    }


def audit_json_text(audit: JudgeAudit) -> str:
    """``audit_json`` as the text both the page's download and the command line write."""
    return json.dumps(audit_json(audit), indent=2, sort_keys=True) + "\n"
