"""The vetting page (methods §3): one perturbation at a time, diff highlighted, keys 1-5.

Every answer is the `#work` part of the page (htmx swaps it in); without htmx, the
whole page or a redirect to the next item.
"""

from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from apps.accounts.models import Role
from apps.accounts.requests import AuthedRequest
from apps.annotation.forms import EditForm, VerdictForm
from apps.annotation.models import Study, Verdict
from apps.annotation.selectors import study_for_role
from apps.annotation.selectors.progress import annotator_progress
from apps.annotation.selectors.work import diff_preview, vetting_item
from apps.annotation.services import (
    KeyReused,
    StaleJudgement,
    WorkRefused,
    perturbation_edit,
    vetting_next,
    vetting_skip,
    vetting_submit,
)
from apps.annotation.views.responses import bad_request, conflict, saved_event

TEMPLATE = "annotation/vet.html"


def vet_next(request: AuthedRequest, pk: int) -> HttpResponse:
    """The annotator's current item (claimed now if they hold none)."""
    study = study_for_role(request.user, pk, Role.ANNOTATOR)
    return _next_page(request, study)


def vet_item(request: AuthedRequest, pk: int, perturbation_pk: int) -> HttpResponse:
    """A given item: one they hold, or one they vetted and want to change ("back")."""
    study = study_for_role(request.user, pk, Role.ANNOTATOR)
    return _page(request, study, perturbation_pk)


@require_POST
def vet_submit(request: AuthedRequest, pk: int, perturbation_pk: int) -> HttpResponse:
    study = study_for_role(request.user, pk, Role.ANNOTATOR)
    form = VerdictForm(request.POST)
    if not form.is_valid():
        return bad_request(form)
    try:
        saved = vetting_submit(
            study=study,
            annotator=request.user,
            perturbation_id=perturbation_pk,
            verdict=form.cleaned_data["verdict"],
            note=form.cleaned_data["note"],
            idempotency_key=form.cleaned_data["idempotency_key"],
            based_on=form.cleaned_data["based_on"],
        )
    except WorkRefused as exc:
        raise PermissionDenied(str(exc)) from exc
    except (KeyReused, StaleJudgement) as exc:
        return conflict(str(exc))
    if not request.htmx:
        return redirect("vet-next", pk=study.pk)
    response = _next_page(request, study)
    label = Verdict(saved.judgement.verdict).label
    return saved_event(response, f"Saved: {label}")


@require_POST
def vet_skip(request: AuthedRequest, pk: int, perturbation_pk: int) -> HttpResponse:
    study = study_for_role(request.user, pk, Role.ANNOTATOR)
    vetting_skip(study=study, annotator=request.user, perturbation_id=perturbation_pk)
    if not request.htmx:
        return redirect("vet-next", pk=study.pk)
    return saved_event(_next_page(request, study), "Skipped: put back in the queue")


@require_POST
def vet_edit(request: AuthedRequest, pk: int, perturbation_pk: int) -> HttpResponse:
    """Save the annotator's edit as a new version; answer the updated diff."""
    study = study_for_role(request.user, pk, Role.ANNOTATOR)
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
    except WorkRefused as exc:
        raise PermissionDenied(str(exc)) from exc
    except ValueError as exc:
        return HttpResponse(str(exc), status=400)
    item = vetting_item(study=study, annotator=request.user, perturbation_id=perturbation_pk)
    response = render(request, f"{TEMPLATE}#texts", {"study": study, "item": item})
    return saved_event(response, f"Edit saved as version {item.version}")


@require_POST
def vet_preview(request: AuthedRequest, pk: int, perturbation_pk: int) -> HttpResponse:
    """The diff of an edit being typed, not saved."""
    study = study_for_role(request.user, pk, Role.ANNOTATOR)
    form = EditForm(request.POST)
    if not form.is_valid():
        return bad_request(form)
    item = vetting_item(study=study, annotator=request.user, perturbation_id=perturbation_pk)
    item.panes = diff_preview(item.perturbation.item.original, form.cleaned_data["text"])
    return render(request, f"{TEMPLATE}#texts", {"study": study, "item": item, "preview": True})


def _next_page(request: AuthedRequest, study: Study) -> HttpResponse:
    slot = vetting_next(study=study, annotator=request.user)
    return _page(request, study, slot.perturbation_id if slot else None)


def _page(request: AuthedRequest, study: Study, perturbation_id: int | None) -> HttpResponse:
    context: dict[str, object]
    if perturbation_id is None:
        progress = annotator_progress(study, request.user, fresh=True)
        context = {"study": study, "item": None, "progress": progress}
    else:
        item = vetting_item(study=study, annotator=request.user, perturbation_id=perturbation_id)
        context = {"study": study, "item": item, "progress": item.progress}
    template = f"{TEMPLATE}#work" if request.htmx else TEMPLATE
    return render(request, template, context)
