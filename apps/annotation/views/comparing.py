"""The comparison page (methods §2): source, two texts in recorded random order, one criterion,
keys A-D. Answers are the `#work` part of the page for htmx."""

from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from apps.accounts.models import Role
from apps.accounts.requests import AuthedRequest
from apps.annotation.forms import ChoiceForm
from apps.annotation.models import Choice, Study
from apps.annotation.selectors import study_for_role
from apps.annotation.selectors.progress import annotator_progress
from apps.annotation.selectors.work import comparison_item
from apps.annotation.services import (
    KeyReused,
    WorkRefused,
    comparison_next,
    comparison_skip,
    comparison_submit,
)
from apps.annotation.views.responses import bad_request, conflict, saved_event

TEMPLATE = "annotation/compare.html"


def compare_next(request: AuthedRequest, pk: int) -> HttpResponse:
    study = study_for_role(request.user, pk, Role.ANNOTATOR)
    return _next_page(request, study)


def compare_item(
    request: AuthedRequest, pk: int, perturbation_pk: int, criterion_pk: int
) -> HttpResponse:
    study = study_for_role(request.user, pk, Role.ANNOTATOR)
    return _page(request, study, (perturbation_pk, criterion_pk))


@require_POST
def compare_submit(
    request: AuthedRequest, pk: int, perturbation_pk: int, criterion_pk: int
) -> HttpResponse:
    study = study_for_role(request.user, pk, Role.ANNOTATOR)
    form = ChoiceForm(request.POST)
    if not form.is_valid():
        return bad_request(form)
    try:
        saved = comparison_submit(
            study=study,
            annotator=request.user,
            perturbation_id=perturbation_pk,
            criterion_id=criterion_pk,
            choice=form.cleaned_data["choice"],
            original_first=form.cleaned_data["original_first"],
            idempotency_key=form.cleaned_data["idempotency_key"],
        )
    except WorkRefused as exc:
        raise PermissionDenied(str(exc)) from exc
    except KeyReused as exc:
        return conflict(str(exc))
    if not request.htmx:
        return redirect("compare-next", pk=study.pk)
    label = Choice(saved.judgement.choice).label
    return saved_event(_next_page(request, study), f"Saved: {saved.judgement.choice} ({label})")


@require_POST
def compare_skip(
    request: AuthedRequest, pk: int, perturbation_pk: int, criterion_pk: int
) -> HttpResponse:
    study = study_for_role(request.user, pk, Role.ANNOTATOR)
    comparison_skip(
        study=study,
        annotator=request.user,
        perturbation_id=perturbation_pk,
        criterion_id=criterion_pk,
    )
    if not request.htmx:
        return redirect("compare-next", pk=study.pk)
    return saved_event(_next_page(request, study), "Skipped: moved to the end of your queue")


def _next_page(request: AuthedRequest, study: Study) -> HttpResponse:
    slot = comparison_next(study=study, annotator=request.user)
    return _page(request, study, (slot.perturbation_id, slot.criterion_id) if slot else None)


def _page(request: AuthedRequest, study: Study, pair: tuple[int, int] | None) -> HttpResponse:
    context: dict[str, object]
    if pair is None:
        progress = annotator_progress(study, request.user, fresh=True)
        context = {"study": study, "item": None, "progress": progress}
    else:
        item = comparison_item(
            study=study, annotator=request.user, perturbation_id=pair[0], criterion_id=pair[1]
        )
        context = {"study": study, "item": item, "progress": item.progress}
    template = f"{TEMPLATE}#work" if request.htmx else TEMPLATE
    return render(request, template, context)
