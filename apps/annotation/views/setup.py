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
from apps.annotation.study_steps import SECTIONS, StudySteps

TEMPLATE = "annotation/study_form.html"


@allow(IsResearcher, message="Only researchers create studies.")
def study_new(request: AuthedRequest) -> HttpResponse:
    """The new-study steps (apps/annotation/study_steps.py); the last one creates it."""
    initial = {"datasets": request.GET.getlist("dataset")}  # from an import's next steps
    data = request.POST if request.method == "POST" else None
    steps = StudySteps(data, user=request.user, initial=initial)
    if steps.create:
        study = study_create(owner=request.user, **steps.form.cleaned_data)
        messages.success(request, f"Study “{study.name}” created. Now add its people.")
        return redirect("study-members", pk=study.pk)
    return render(request, "annotation/study_new.html", {"steps": steps, "form": steps.form})


@allow(IsStudyOwner)
def study_edit(request: AuthedRequest, pk: int) -> HttpResponse:
    study = study_access(request, pk).study
    form = StudyForm(request.POST or None, instance=study, user=request.user)
    if request.method == "POST" and form.is_valid():
        data = dict(form.cleaned_data)
        study_update(study=study, **data)
        messages.success(request, "Study saved; its plan is up to date.")
        return redirect("study-detail", pk=study.pk)
    sections = [(section, [form[name] for name in section.fields]) for section in SECTIONS]
    return render(request, TEMPLATE, {"form": form, "study": study, "sections": sections})


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
