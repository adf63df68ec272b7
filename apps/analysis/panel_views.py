"""The review of a study's recruited panel (`/studies/{id}/panel/participants/`, its
researchers): each participant's progress, accuracy on control items, agreement and time on
task (apps/analysis/panel_review.py), with approve / reject (apps/annotation/views/panel.py).
Here, not in annotation, because it shows statistics (as the progress page)."""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import render

from apps.accounts.permissions import allow
from apps.accounts.requests import AuthedRequest
from apps.analysis.panel_review import panel_figures
from apps.annotation.permissions import STUDY_RESEARCHERS, study_access


@allow(STUDY_RESEARCHERS)
def panel_participants(request: AuthedRequest, pk: int) -> HttpResponse:
    """Every participant with their progress, accuracy, agreement, time and decision."""
    study = study_access(request, pk).study
    context = {"study": study, "panel": panel_figures(study)}
    return render(request, "annotation/panel_participants.html", context)
