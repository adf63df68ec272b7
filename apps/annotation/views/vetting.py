"""The vetting page (methods §3): one perturbation at a time, diff highlighted, keys 1-5; the
annotator may edit the perturbed text (a new version) and preview the diff while typing.

Next, back, submit and skip are the shared work pages (views/work.py).
"""

from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_POST

from apps.accounts.requests import AuthedRequest
from apps.annotation.forms import EditForm, VerdictForm
from apps.annotation.selectors.work import diff_preview, vetting_item
from apps.annotation.services import VETTING, perturbation_edit
from apps.annotation.views.responses import REFUSALS, bad_request, refused, saved_event
from apps.annotation.views.work import WorkPage

TEMPLATE = "annotation/vet.html"
PAGE = WorkPage(
    work=VETTING,
    template=TEMPLATE,
    form=VerdictForm,
    prefix="vet",
    unit="<int:perturbation_pk>/",
    submit="verdict",
)


@PAGE.allowed
@require_POST
def vet_edit(request: AuthedRequest, pk: int, perturbation_pk: int) -> HttpResponse:
    """Save the annotator's edit as a new version; answer the updated diff."""
    study = PAGE.study(request, pk)
    form = EditForm(request.POST)
    if not form.is_valid():
        return bad_request(form)
    try:
        perturbation_edit(
            study=study,
            annotator=request.user,
            perturbation_id=perturbation_pk,
            text=form.cleaned_data["text"],
            note=form.cleaned_data["note"],
        )
    except REFUSALS as exc:
        return refused(exc)
    item = vetting_item(study=study, annotator=request.user, perturbation_id=perturbation_pk)
    response = render(request, f"{TEMPLATE}#texts", {"study": study, "item": item})
    return saved_event(response, f"Edit saved as version {item.version}")


@PAGE.allowed
@require_POST
def vet_preview(request: AuthedRequest, pk: int, perturbation_pk: int) -> HttpResponse:
    """The diff of an edit being typed, not saved."""
    study = PAGE.study(request, pk)
    form = EditForm(request.POST)
    if not form.is_valid():
        return bad_request(form)
    item = vetting_item(study=study, annotator=request.user, perturbation_id=perturbation_pk)
    item.panes = diff_preview(item.perturbation.item.original, form.cleaned_data["text"])
    return render(request, f"{TEMPLATE}#texts", {"study": study, "item": item, "preview": True})
