"""The study's control items page (its researchers): the items with their known answers, how
often they come and what a low accuracy does; add one, import a file, remove one
(docs/annotation.md, "Control items"). Accuracy is on the progress page (analysis app)."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from apps.accounts.permissions import allow
from apps.accounts.requests import AuthedRequest
from apps.annotation.forms import ControlForm, ControlImportForm, ControlSettingsForm
from apps.annotation.models import Study
from apps.annotation.permissions import STUDY_RESEARCHERS, study_access
from apps.annotation.selectors.controls import control_items
from apps.annotation.services.controls import (
    control_add,
    control_remove,
    control_rows,
    controls_import,
)

TEMPLATE = "annotation/controls.html"


def _page(request: AuthedRequest, study: Study, status: int = 200, **forms) -> HttpResponse:
    context = {
        "study": study,
        "controls": control_items(study),
        "settings_form": forms.get("settings_form") or ControlSettingsForm(instance=study),
        "form": forms.get("form") or ControlForm(),
        "import_form": forms.get("import_form") or ControlImportForm(),
    }
    return render(request, TEMPLATE, context, status=status)


@allow(STUDY_RESEARCHERS)
def controls(request: AuthedRequest, pk: int) -> HttpResponse:
    return _page(request, study_access(request, pk).study)


@allow(STUDY_RESEARCHERS)
@require_POST
def control_settings(request: AuthedRequest, pk: int) -> HttpResponse:
    study = study_access(request, pk).study
    form = ControlSettingsForm(request.POST, instance=study)
    if not form.is_valid():
        return _page(request, study, 400, settings_form=form)
    form.save()
    messages.success(request, "Control settings saved.")
    return redirect("study-controls", pk=study.pk)


@allow(STUDY_RESEARCHERS)
@require_POST
def control_new(request: AuthedRequest, pk: int) -> HttpResponse:
    study = study_access(request, pk).study
    form = ControlForm(request.POST)
    if form.is_valid():
        try:
            control = control_add(study=study, **form.cleaned_data)
        except ValueError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, f"Control item added ({control.get_work_display()}).")
            return redirect("study-controls", pk=study.pk)
    return _page(request, study, 400, form=form)


@allow(STUDY_RESEARCHERS)
@require_POST
def control_import(request: AuthedRequest, pk: int) -> HttpResponse:
    study = study_access(request, pk).study
    form = ControlImportForm(request.POST, request.FILES)
    if form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            added = controls_import(study=study, rows=control_rows(upload.name, upload.read()))
        except ValueError as exc:
            form.add_error("file", f"Nothing imported: {exc}.")
        else:
            messages.success(request, f"{len(added)} control items imported.")
            return redirect("study-controls", pk=study.pk)
    return _page(request, study, 400, import_form=form)


@allow(STUDY_RESEARCHERS)
@require_POST
def control_delete(request: AuthedRequest, pk: int, control_pk: int) -> HttpResponse:
    study = study_access(request, pk).study
    try:
        control_remove(study=study, control_id=control_pk)
    except ValueError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, "Control item removed, with the answers given to it.")
    return redirect("study-controls", pk=study.pk)
