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
