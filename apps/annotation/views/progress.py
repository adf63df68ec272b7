"""The study's annotation settings and plan, changed by its researchers from the progress page
(which is the analysis app's: apps/analysis/progress_views.py, it shows statistics)."""

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from apps.accounts.permissions import allow
from apps.accounts.requests import AuthedRequest
from apps.annotation.forms import StudySettingsForm
from apps.annotation.models import Study
from apps.annotation.permissions import STUDY_RESEARCHERS, study_access
from apps.annotation.services import study_plan_request


@allow(STUDY_RESEARCHERS)
@require_POST
def study_settings(request: AuthedRequest, pk: int) -> HttpResponse:
    """Save the annotation settings and bring the plan up to date with them; a bad value
    shows the form again with what is wrong (nothing saved)."""
    study = study_access(request, pk).study
    form = StudySettingsForm(request.POST, instance=study)
    if not form.is_valid():
        context = {"study": study, "form": form}
        return render(request, "annotation/settings.html", context, status=400)
    form.save()
    return _plan_built(request, study)


@allow(STUDY_RESEARCHERS)
@require_POST
def plan_build(request: AuthedRequest, pk: int) -> HttpResponse:
    return _plan_built(request, study_access(request, pk).study)


def _plan_built(request: AuthedRequest, study: Study) -> HttpResponse:
    summary = study_plan_request(study=study)
    if summary is None:
        messages.info(
            request,
            "The plan is large: the worker is building it; this page shows when it is ready.",
        )
        return redirect("study-progress", pk=study.pk)
    if summary.problem:
        messages.warning(request, f"The criteria design was not changed: {summary.problem}")
    messages.success(request, f"Plan up to date: {summary.describe()}.")
    return redirect("study-progress", pk=study.pk)
