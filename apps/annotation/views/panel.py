"""The study's panel pages (its researchers, docs/annotation.md, "Recruiting a panel"): the
settings for recruited participants, the secret recruitment links, made, rotated and closed
here; approve / reject of the participants, and the decisions as the platforms import them
(CSV). The review page, which shows figures, is the analysis app's
(apps/analysis/panel_views.py)."""

from __future__ import annotations

import io

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from apps.accounts.permissions import allow
from apps.accounts.requests import AuthedRequest
from apps.annotation.forms import PanelSettingsForm
from apps.annotation.models import PanelLink, Participant, Study
from apps.annotation.permissions import STUDY_RESEARCHERS, study_access
from apps.annotation.selectors.panel import panel_links
from apps.annotation.selectors.panel_review import decisions
from apps.annotation.services.panel import (
    panel_link_close,
    panel_link_open,
    panel_link_rotate,
    panel_of,
    panel_seats_sync,
    participant_decide,
)
from apps.csv_cells import safe_writer

TEMPLATE = "annotation/panel.html"


def _page(
    request: AuthedRequest, study: Study, form: PanelSettingsForm | None = None, status: int = 200
) -> HttpResponse:
    context = {
        "study": study,
        "form": form or PanelSettingsForm(instance=panel_of(study)),
        "groups": range(1, study.comparison_groups + 1) if study.comparison_groups > 1 else [],
        "links": panel_links(study, request.build_absolute_uri("/").rstrip("/")),
    }
    return render(request, TEMPLATE, context, status=status)


@allow(STUDY_RESEARCHERS)
def panel(request: AuthedRequest, pk: int) -> HttpResponse:
    return _page(request, study_access(request, pk).study)


@allow(STUDY_RESEARCHERS)
@require_POST
def panel_settings(request: AuthedRequest, pk: int) -> HttpResponse:
    study = study_access(request, pk).study
    form = PanelSettingsForm(request.POST, instance=panel_of(study))
    if not form.is_valid():
        return _page(request, study, form, status=400)
    form.save()
    panel_seats_sync(study=study)  # more places per group: more seats in the design
    messages.success(request, "Panel settings saved.")
    return redirect("study-panel", pk=study.pk)


@allow(STUDY_RESEARCHERS)
@require_POST
def panel_link_new(request: AuthedRequest, pk: int) -> HttpResponse:
    """Make (or open again) the study's link, or a group's (`group`: 1 to G)."""
    study = study_access(request, pk).study
    group = request.POST.get("group") or ""
    try:
        panel_link_open(study=study, group=int(group) - 1 if group else None)
    except ValueError as exc:
        messages.error(request, f"No link made: {exc}.")
    else:
        messages.success(request, "Recruitment link open.")
    return redirect("study-panel", pk=study.pk)


@allow(STUDY_RESEARCHERS)
@require_POST
def panel_link_change(request: AuthedRequest, pk: int, link_pk: int, action: str) -> HttpResponse:
    """Rotate a link's secret (`rotate`) or close it (`close`)."""
    study = study_access(request, pk).study
    link = get_object_or_404(PanelLink, study=study, pk=link_pk)
    if action == "rotate":
        panel_link_rotate(link=link)
        messages.success(request, "New link made: the old one no longer works.")
    else:
        panel_link_close(link=link)
        messages.success(request, "Link closed: nobody new joins through it.")
    return redirect("study-panel", pk=study.pk)


@allow(STUDY_RESEARCHERS)
@require_POST
def participant_decision(request: AuthedRequest, pk: int, participant_pk: int) -> HttpResponse:
    """Approve or reject one participant (`decision`, `reason`)."""
    study = study_access(request, pk).study
    participant = get_object_or_404(Participant, study=study, pk=participant_pk)
    try:
        participant_decide(
            participant=participant,
            decision=request.POST.get("decision", ""),
            reason=request.POST.get("reason", ""),
        )
    except ValueError as exc:
        messages.error(request, f"{participant.external_id}: nothing changed, {exc}.")
    else:
        messages.success(request, f"{participant.external_id}: {participant.decision}.")
    return redirect("study-panel-participants", pk=study.pk)


@allow(STUDY_RESEARCHERS)
def panel_decisions(request: AuthedRequest, pk: int) -> HttpResponse:
    """The decisions as a CSV file: participant id, decision, reason."""
    study = study_access(request, pk).study
    buffer = io.StringIO()
    writer = safe_writer(buffer)
    writer.writerow(["participant_id", "decision", "reason"])
    writer.writerows(decisions(study))
    response = HttpResponse(buffer.getvalue(), content_type="text/csv; charset=utf-8")
    name = f"{study.slug}-decisions.csv"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
