"""The expert survey (methods §4): for each task and kind, pick the most affected metric. All
questions are on one page; a vote is saved by the shared submit (views/work.py), which answers that
card, marked saved, with a fresh idempotency key. Its answer form, page, API shapes and API
(`work_api`, the API's next, skip, list and submit being api/work.py) are declared here."""

import uuid
from typing import Any

from django import forms
from django.http import HttpResponse
from django.shortcuts import render
from rest_framework import serializers

from apps.accounts.requests import AuthedRequest
from apps.annotation.api.work import work_api
from apps.annotation.forms import AnswerForm
from apps.annotation.models import ExpertVote, Study
from apps.annotation.selectors.survey import SurveyCard, survey_cards
from apps.annotation.serializers import AnswerSerializer
from apps.annotation.services import SURVEY, Saved
from apps.annotation.services.votes import question_of
from apps.annotation.views.work import WorkPage


class VoteForm(AnswerForm):
    kind = forms.IntegerField()
    metric = forms.IntegerField()


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


class ExpertVoteInSerializer(AnswerSerializer):
    kind = serializers.IntegerField()
    metric = serializers.IntegerField()


class ExpertVoteSerializer(serializers.ModelSerializer):
    expert = serializers.SlugRelatedField(slug_field="username", read_only=True)
    task = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    kind = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    metric = serializers.SlugRelatedField(slug_field="slug", read_only=True)

    class Meta:
        model = ExpertVote
        fields = ["id", "study", "expert", "task", "kind", "metric", "created_at", "updated_at"]


SurveyAPI = work_api(
    SURVEY,
    answers="expert-votes",
    judgement=ExpertVoteSerializer,
    answer=ExpertVoteInSerializer,
    related=("task", "kind", "metric"),
)
