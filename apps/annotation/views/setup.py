"""The researcher's study set-up pages: create, edit, archive (docs/annotation.md)."""

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from apps.accounts.permissions import is_researcher
from apps.accounts.requests import AuthedRequest
from apps.annotation.forms import StudyForm
from apps.annotation.selectors import study_for_owner
from apps.annotation.services.studies import study_archive, study_create, study_update

TEMPLATE = "annotation/study_form.html"


def study_new(request: AuthedRequest) -> HttpResponse:
    if not is_researcher(request.user):
        raise PermissionDenied("Only researchers create studies.")
    form = StudyForm(request.POST or None, user=request.user)
    if request.method == "POST" and form.is_valid():
        study = study_create(owner=request.user, **form.cleaned_data)
        messages.success(request, f"Study “{study.name}” created. Now add its people.")
        return redirect("study-members", pk=study.pk)
    return render(request, TEMPLATE, {"form": form, "study": None})


def study_edit(request: AuthedRequest, pk: int) -> HttpResponse:
    study = study_for_owner(request.user, pk)
    form = StudyForm(request.POST or None, instance=study, user=request.user)
    if request.method == "POST" and form.is_valid():
        data = dict(form.cleaned_data)
        study_update(study=study, **data)
        messages.success(request, "Study saved; its plan is up to date.")
        return redirect("study-detail", pk=study.pk)
    return render(request, TEMPLATE, {"form": form, "study": study})


@require_POST
def study_archive_toggle(request: AuthedRequest, pk: int) -> HttpResponse:
    study = study_for_owner(request.user, pk)
    archived = request.POST.get("archived") == "1"
    study_archive(study=study, archived=archived)
    if archived:
        messages.success(request, f"“{study.name}” is archived: it left members' lists.")
    else:
        messages.success(request, f"“{study.name}” is active again.")
    return redirect("study-detail", pk=study.pk)
