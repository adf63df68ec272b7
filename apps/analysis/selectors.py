"""Report reads: the judge run a report is about, within its study."""

from __future__ import annotations

from django.shortcuts import get_object_or_404

from apps.annotation.models import Study
from apps.judging.models import JudgeRun


def report_run(study: Study, run_id: str | int | None) -> JudgeRun | None:
    if run_id in (None, ""):
        return None
    return get_object_or_404(
        JudgeRun.objects.select_related("judge", "strategy", "study"), pk=run_id, study=study
    )


def audits_for_user(user, share: str = ""):
    """The audits whose cards this user may read: their own (superusers: all), plus the one
    a valid, unrevoked share link names (any logged-in user who has the link)."""
    from django.db.models import Exists, OuterRef, Q

    from apps.analysis.models import CardShare
    from apps.judging.models import JudgeAudit

    audits = JudgeAudit.objects.select_related("study", "dataset", "owner")
    own = JudgeAudit.objects.for_user(user).values("pk")
    if not share or not user.is_authenticated:
        return audits.filter(pk__in=own)
    shared = CardShare.objects.filter(audit=OuterRef("pk"), token=share, revoked_at__isnull=True)
    return audits.filter(Q(pk__in=own) | Exists(shared))


def audit_readable(user, pk: int, share: str = ""):
    """The audit, if this user may read its cards; else a 404 (as if it did not exist)."""
    return get_object_or_404(audits_for_user(user, share), pk=pk)


def audit_owned(user, pk: int):
    """The audit, if this user may manage its share links (its owner); else a 404."""
    from apps.judging.models import JudgeAudit

    return get_object_or_404(JudgeAudit.objects.for_user(user), pk=pk)


def verdict_thresholds(study: Study | None) -> dict[str, float]:
    """Each figure's verdict threshold: the study's own where it set one, else the default."""
    from apps.analysis.definitions import DEFINITIONS
    from apps.analysis.models import VerdictThreshold

    chosen = {k: d.threshold for k, d in DEFINITIONS.items() if d.threshold is not None}
    if study is not None:
        own = VerdictThreshold.objects.filter(study=study, figure__in=list(chosen))
        chosen |= dict(own.values_list("figure", "value"))
    return chosen
