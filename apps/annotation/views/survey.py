"""The expert survey (methods §4): for each task and kind, pick the most affected metric. All
questions are on one page; a vote is saved by the shared submit (views/work.py), which
answers that card, marked saved, with a fresh idempotency key."""

import uuid
from typing import Any

from django.http import HttpResponse
from django.shortcuts import render

from apps.accounts.requests import AuthedRequest
from apps.annotation.forms import VoteForm
from apps.annotation.models import Study
from apps.annotation.selectors.survey import SurveyCard, survey_cards
from apps.annotation.services import SURVEY, Saved
from apps.annotation.services.votes import question_of
from apps.annotation.views.work import WorkPage

TEMPLATE = "annotation/survey.html"


def _card(request: AuthedRequest, study: Study, saved: Saved[Any]) -> HttpResponse:
    vote = saved.judgement
    question = question_of(vote)
    if question is not None:  # read by the submit: the card and the count, no statement
        card = SurveyCard(question.task, vote.kind, question.metrics, vote.metric_id)
        answered = question.answered_elsewhere + 1
    else:
        cards = survey_cards(study, request.user)
        card = next(c for c in cards if (c.task.pk, c.kind.pk) == (vote.task_id, vote.kind_id))
        answered = sum(c.chosen_metric_id is not None for c in cards)
    context = {"study": study, "card": card, "key": uuid.uuid4(), "answered_oob": answered}
    return render(request, f"{TEMPLATE}#card", context)


PAGE = WorkPage(
    work=SURVEY,
    template=TEMPLATE,
    form=VoteForm,
    prefix="survey",
    unit="",
    submit="vote",
    home="survey",
    answered=_card,
    handed_out=False,
)


@PAGE.allowed
def survey(request: AuthedRequest, pk: int) -> HttpResponse:
    study = PAGE.study(request, pk)
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
