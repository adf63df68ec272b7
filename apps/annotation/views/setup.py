"""The researcher's study set-up pages: create, edit, archive (docs/annotation.md)."""

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from apps.accounts.permissions import IsResearcher, allow
from apps.accounts.requests import AuthedRequest
from apps.annotation.forms import StudyForm
from apps.annotation.permissions import IsStudyOwner, study_access
from apps.annotation.services.studies import study_archive, study_create, study_update

TEMPLATE = "annotation/study_form.html"


@allow(IsResearcher, message="Only researchers create studies.")
def study_new(request: AuthedRequest) -> HttpResponse:
    initial = {"datasets": request.GET.getlist("dataset")}  # from an import's next steps
    form = StudyForm(request.POST or None, user=request.user, initial=initial)
    if request.method == "POST" and form.is_valid():
        study = study_create(owner=request.user, **form.cleaned_data)
        messages.success(request, f"Study “{study.name}” created. Now add its people.")
        return redirect("study-members", pk=study.pk)
    return render(request, TEMPLATE, {"form": form, "study": None})


@allow(IsStudyOwner)
def study_edit(request: AuthedRequest, pk: int) -> HttpResponse:
    study = study_access(request, pk).study
    form = StudyForm(request.POST or None, instance=study, user=request.user)
    if request.method == "POST" and form.is_valid():
        data = dict(form.cleaned_data)
        study_update(study=study, **data)
        messages.success(request, "Study saved; its plan is up to date.")
        return redirect("study-detail", pk=study.pk)
    return render(request, TEMPLATE, {"form": form, "study": study})


@allow(IsStudyOwner)
@require_POST
def study_archive_toggle(request: AuthedRequest, pk: int) -> HttpResponse:
    study = study_access(request, pk).study
    archived = request.POST.get("archived") == "1"
    study_archive(study=study, archived=archived)
    if archived:
        messages.success(request, f"“{study.name}” is archived: it left members' lists.")
    else:
        messages.success(request, f"“{study.name}” is active again.")
    return redirect("study-detail", pk=study.pk)
