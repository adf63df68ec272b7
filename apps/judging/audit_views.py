"""Judge audit pages (researchers; an audit is its owner's): plan one from a study or a
dataset, see the estimate, start it, follow every part live, cancel and resume it
(docs/audit.md)."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from apps.accounts.permissions import IsResearcher, allow, owned_by
from apps.accounts.requests import AuthedRequest
from apps.annotation.models import Study
from apps.corpus.selectors import datasets_for_user
from apps.judging import audit_selectors as selectors
from apps.judging.audit_forms import AuditForm
from apps.judging.models import AuditStatus
from apps.judging.services import audits
from apps.judging.views import _errors_to_form


@allow(IsResearcher)
def audit_list(request: AuthedRequest) -> HttpResponse:
    found = [
        audits.audit_refresh(a) if a.status == AuditStatus.RUNNING else a
        for a in selectors.audits_for_user(request.user)[:200]
    ]
    return render(request, "judging/audit_list.html", {"audits": found})


@allow(IsResearcher)
def audit_new(request: AuthedRequest) -> HttpResponse:
    """Plan an audit of ``?study=`` (yours) or ``?dataset=``; the audit page then shows the
    estimate and a Start button."""
    study = dataset = None
    if study_id := request.GET.get("study"):
        study = get_object_or_404(owned_by(Study.objects.all(), request.user), pk=_int(study_id))
    elif dataset_id := request.GET.get("dataset"):
        dataset = get_object_or_404(datasets_for_user(request.user), pk=_int(dataset_id))
    form = AuditForm(request.POST or None, user=request.user, study=study)
    if request.method == "POST" and form.is_valid():
        try:
            audit = audits.audit_plan(
                owner=request.user,
                study=study,
                dataset=dataset,
                subjects=form.subjects(),
                search_budget=form.cleaned_data["search_budget"],
                generator=form.cleaned_data["generator"],
                gold_judge=form.cleaned_data["gold_judge"],
                label=form.cleaned_data["label"],
                vetted_only=form.cleaned_data.get("vetted_only") if study else None,
            )
        except ValidationError as error:
            _errors_to_form(form, error)
        else:
            return redirect("judging-audit-detail", pk=audit.pk)
    context = {"form": form, "study": study, "dataset": dataset}
    return render(request, "judging/audit_new.html", context)


@allow(IsResearcher)
def audit_detail(request: AuthedRequest, pk: int) -> HttpResponse:
    audit = audits.audit_refresh(selectors.audit_for_user(request.user, pk))
    template = "judging/audit_detail.html"
    if request.htmx:
        template += "#live"
    context = selectors.audit_context(audit)
    if audit.status == AuditStatus.PENDING:
        context["confirm_needed"] = audits.audit_confirm_problem(audit)
    return render(request, template, context)


@allow(IsResearcher)
@require_POST
def audit_start(request: AuthedRequest, pk: int) -> HttpResponse:
    audit = selectors.audit_for_user(request.user, pk)
    try:
        audits.audit_start(
            audit=audit,
            confirmed=request.POST.get("confirm") == "1",
            batch=request.POST.get("mode") == "batch",
            live_fallback=request.POST.get("live_fallback") == "1",
        )
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
    return redirect("judging-audit-detail", pk=audit.pk)


@allow(IsResearcher)
@require_POST
def audit_over_all(request: AuthedRequest, pk: int) -> HttpResponse:
    """The one click that fixes an audit that would measure nothing for want of vetting."""
    audit = selectors.audit_for_user(request.user, pk)
    try:
        audit = audits.audit_plan_again(audit=audit, vetted_only=False)
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
    else:
        messages.success(request, "Planned again over every perturbation, vetted or not.")
    return redirect("judging-audit-detail", pk=audit.pk)


@allow(IsResearcher)
@require_POST
def audit_cancel(request: AuthedRequest, pk: int) -> HttpResponse:
    audit = audits.audit_cancel(audit=selectors.audit_for_user(request.user, pk))
    messages.info(request, f"Audit {audit.pk} cancelled; resume it to continue from here.")
    return redirect("judging-audit-detail", pk=audit.pk)


@allow(IsResearcher)
@require_POST
def audit_resume(request: AuthedRequest, pk: int) -> HttpResponse:
    audit = audits.audit_resume(audit=selectors.audit_for_user(request.user, pk))
    return redirect("judging-audit-detail", pk=audit.pk)


def _int(value: str) -> int:
    try:
        return int(value)
    except ValueError:
        return 0
