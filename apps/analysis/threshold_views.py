"""A study's verdict thresholds (docs/cards.md, "The verdict"): the line each figure must be
on the right side of for a report card to say "detects" (or its good word)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect, render

from apps.accounts.permissions import allow
from apps.accounts.requests import AuthedRequest
from apps.analysis.definitions import DEFINITIONS
from apps.analysis.selectors import verdict_thresholds
from apps.analysis.services import ThresholdError, verdict_thresholds_save
from apps.annotation.permissions import IsStudyOwner, study_access


@allow(IsStudyOwner)
def study_thresholds(request: AuthedRequest, pk: int) -> HttpResponse:
    study = study_access(request, pk).study
    errors: dict[str, str] = {}
    if request.method == "POST":
        values = {key: request.POST.get(key, "") for key in verdict_thresholds(None)}
        try:
            verdict_thresholds_save(study=study, values=values)
        except ThresholdError as exc:
            errors = exc.errors
        else:
            messages.success(request, "Thresholds saved: report cards use them from now on.")
            return redirect("study-thresholds", pk=study.pk)
    current = verdict_thresholds(study)
    rows: list[dict[str, Any]] = []
    for key, default in verdict_thresholds(None).items():
        d = DEFINITIONS[key]
        shown = request.POST.get(key) if errors else current[key]
        rows.append(
            {
                "key": key,
                "definition": d,
                "default": default,
                "value": shown,
                "changed": current[key] != default,
                "error": errors.get(key, ""),
            }
        )
    return render(request, "analysis/thresholds.html", {"study": study, "rows": rows})
