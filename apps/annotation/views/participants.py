"""The pages of a recruited participant (docs/annotation.md, "Recruiting a panel"): the
recruitment link (consent and guidelines, then their own identity, signed in with no
password), and their study's start and completion page, which sends them to their work and,
when they are finished, shows their code and sends them back to the platform."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import login
from django.http import HttpResponse
from django.shortcuts import redirect, render

from apps.accounts.permissions import AllowAny, allow
from apps.accounts.rates import client_address, over_limit
from apps.accounts.requests import AuthedRequest
from apps.annotation.models import PanelLink, Participant, Study
from apps.annotation.permissions import IsStudyParticipant, study_access
from apps.annotation.services.panel import (
    Arrival,
    PanelFull,
    arrival_from,
    panel_of,
    participant_find,
    participant_join,
    resume_problem,
)
from apps.annotation.services.participation import participant_next_work, participant_of
from apps.annotation.views.work import page_of

BACKEND = "apps.accounts.backends.UserBackend"
JOIN = "annotation/join.html"
HOUR = 3600


@allow(AllowAny)
def join(request: AuthedRequest, token: str) -> HttpResponse:
    """The recruitment link: GET shows the consent text and guidelines; POST (agreed) makes
    or finds the participant's identity, signs them in and sends them to their work."""
    link = PanelLink.objects.filter(token=token).select_related("study").first()
    try:
        arrival = arrival_from(request.GET)
    except ValueError as exc:
        return _closed(request, str(exc), 400) if link else _closed(request)
    known = participant_find(study=link.study, arrival=arrival) if link else None
    if link is None or (not link.open and known is None):
        return _closed(request)
    study = link.study
    if known is not None and request.user.is_authenticated and request.user.pk == known.user_id:
        return redirect("participant-home", pk=study.pk)
    if known is not None and (problem := resume_problem(participant=known, arrival=arrival)):
        return _closed(request, problem, 403)
    context = {"study": study, "panel": panel_of(study), "query": request.GET.urlencode()}
    if request.method != "POST":
        return render(request, JOIN, context)
    if not request.POST.get("consent"):
        context["problem"] = "Tick the box to say you agree before you start."
        return render(request, JOIN, context, status=400)
    return _joined(request, link, arrival, known)


def _joined(
    request: AuthedRequest, link: PanelLink, arrival: Arrival, known: Participant | None
) -> HttpResponse:
    if known is None and over_limit(
        "panel-join",
        client_address(request),
        limit=settings.DISCERN_PANEL_JOINS_PER_HOUR,
        seconds=HOUR,
    ):
        response = render(request, "annotation/join_limited.html", status=429)
        response["Retry-After"] = str(HOUR)
        return response
    try:
        participant, _ = participant_join(link=link, arrival=arrival)
    except PanelFull as exc:
        return render(request, "annotation/join_full.html", {"message": str(exc)}, status=409)
    login(request, participant.user, backend=BACKEND)
    return redirect("participant-home", pk=link.study_id)


def _closed(request: AuthedRequest, message: str = "", status: int = 404) -> HttpResponse:
    context = {"message": message or "This link is closed or does not exist."}
    return render(request, "annotation/join_closed.html", context, status=status)


@allow(IsStudyParticipant)
def participant_home(request: AuthedRequest, pk: int) -> HttpResponse:
    """The participant's next work (`after`: a type that had nothing more for them), or,
    when they are finished, their code and the way back to the platform."""
    study = study_access(request, pk).study
    work = participant_next_work(study=study, person=request.user, after=request.GET.get("after"))
    if work is not None:
        return redirect(page_of(work.slug).start, pk=study.pk)
    participant = participant_of(study=study, person=request.user)
    return render(request, "annotation/participant_done.html", _done(study, participant))


def _done(study: Study, participant: Participant) -> dict[str, object]:
    panel = panel_of(study)
    screened = participant.status == Participant.Status.SCREENED_OUT
    return {
        "study": study,
        "participant": participant,
        "screened": screened,
        "code": panel.screened_out_code if screened else panel.completion_code,
        "next_url": panel.screened_out_url if screened else panel.completion_url,
    }
