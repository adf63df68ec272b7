"""The expert survey (methods §4): for each task and kind, pick the most affected metric."""

import uuid

from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from apps.accounts.models import Role
from apps.accounts.requests import AuthedRequest
from apps.annotation.forms import VoteForm
from apps.annotation.selectors import study_for_role
from apps.annotation.selectors.survey import survey_cards
from apps.annotation.services import KeyReused, WorkRefused, expert_vote_submit
from apps.annotation.views.responses import bad_request, conflict, saved_event

TEMPLATE = "annotation/survey.html"


def survey(request: AuthedRequest, pk: int) -> HttpResponse:
    study = study_for_role(request.user, pk, Role.EXPERT)
    cards = survey_cards(study, request.user)
    return render(
        request,
        TEMPLATE,
        {
            "study": study,
            "cards": [(card, uuid.uuid4()) for card in cards],
            "answered": sum(card.chosen_metric_id is not None for card in cards),
        },
    )


@require_POST
def survey_vote(request: AuthedRequest, pk: int) -> HttpResponse:
    """Save one vote; answer that card, marked saved, with a fresh idempotency key."""
    study = study_for_role(request.user, pk, Role.EXPERT)
    form = VoteForm(request.POST)
    if not form.is_valid():
        return bad_request(form)
    try:
        saved = expert_vote_submit(
            study=study,
            expert=request.user,
            kind_id=form.cleaned_data["kind"],
            metric_id=form.cleaned_data["metric"],
            idempotency_key=form.cleaned_data["idempotency_key"],
        )
    except WorkRefused as exc:
        raise PermissionDenied(str(exc)) from exc
    except KeyReused as exc:
        return conflict(str(exc))
    if not request.htmx:
        return redirect("survey", pk=study.pk)
    vote = saved.judgement
    cards = survey_cards(study, request.user)
    card = next(c for c in cards if (c.task.pk, c.kind.pk) == (vote.task_id, vote.kind_id))
    context = {
        "study": study,
        "card": card,
        "key": uuid.uuid4(),
        "answered_oob": sum(c.chosen_metric_id is not None for c in cards),
    }
    response = render(request, f"{TEMPLATE}#card", context)
    return saved_event(response, f"Saved: {card.kind.name} → {vote.metric.name}")
