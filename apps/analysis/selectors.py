"""Who may read a study's reports: researchers of that study (owner or member)."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404

from apps.accounts.permissions import is_researcher
from apps.annotation.models import Study
from apps.judging.models import JudgeRun


def report_study_for_user(user, pk: int) -> Study:
    study = get_object_or_404(Study.objects.for_user(user), pk=pk)
    if not is_researcher(user):
        raise PermissionDenied("Reports are for researchers.")
    return study


def report_run(study: Study, run_id: str | int | None) -> JudgeRun | None:
    if run_id in (None, ""):
        return None
    return get_object_or_404(
        JudgeRun.objects.select_related("judge", "strategy", "study"), pk=run_id, study=study
    )
