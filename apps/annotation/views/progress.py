"""The study's annotation settings and plan, changed by its researchers from the progress page
(which is the analysis app's: apps/analysis/progress_views.py, it shows statistics)."""

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from apps.accounts.models import Role
from apps.accounts.requests import AuthedRequest
from apps.annotation.forms import StudySettingsForm
from apps.annotation.selectors import study_for_role
from apps.annotation.services import study_plan_request


@require_POST
def study_settings(request: AuthedRequest, pk: int) -> HttpResponse:
    """Save the annotation settings and bring the plan up to date with them; a bad value
    shows the form again with what is wrong (nothing saved)."""
    study = study_for_role(request.user, pk, Role.RESEARCHER)
    form = StudySettingsForm(request.POST, instance=study)
    if not form.is_valid():
        context = {"study": study, "form": form}
        return render(request, "annotation/settings.html", context, status=400)
    form.save()
    return plan_build(request, pk)


@require_POST
def plan_build(request: AuthedRequest, pk: int) -> HttpResponse:
    study = study_for_role(request.user, pk, Role.RESEARCHER)
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
