"""Expert votes (methods §4): the metric of a task most affected by a perturbation kind.

The survey hands out all its units at once (one card per task x kind, on one page): no
slots, no "next" and no skip; saving goes through the shared `Work.submit`.
"""

from __future__ import annotations

import uuid
from typing import Any

from apps.accounts.models import Role
from apps.annotation.kinds import register
from apps.annotation.models import ExpertVote, Study
from apps.annotation.selectors.survey import SURVEY_QUESTION, SurveyQuestion, question_from
from apps.annotation.services.errors import WorkRefused
from apps.annotation.services.work import Saved, Unit, Work
from apps.answer_sql import Through
from apps.catalog.models import Metric


class SurveyWork(Work):
    slug, name, action = "survey", "Expert survey", "Expert survey"
    position = 9
    model = ExpertVote
    role = Role.EXPERT
    answer_keys = ("metric",)
    answer_noun = "vote"
    answers_figure = ("votes", "Expert votes", "vote-count")

    # The vote's task is the task of the metric voted for; the question (that task, the
    # kind) is read once, with what the page shows of it, by the save's first step, and the
    # saved vote carries it (`question_of`).
    through = (Through("task_id", Metric, "task_id", "metric"),)
    reads = SURVEY_QUESTION

    def read_back(self, *, unit: Unit, value: Any) -> tuple[Unit, Any]:
        question = question_from(value)
        _refuse_unless_asked(question)
        assert question is not None
        return question.unit, question

    def values(self, *, study, person, unit, answer, earlier, slot, held=None) -> dict[str, Any]:
        return {"metric_id": answer["metric"]}

    def after_save(self, *, study: Study, judgement: Any, held: Any, counted: Any = None) -> None:
        if held is not None:  # the question, read by the save's first statement
            _attach(judgement, held)

    def label(self, judgement: Any) -> str:
        return f"{judgement.kind.name} → {judgement.metric.name}"


def _refuse_unless_asked(question: SurveyQuestion | None) -> None:
    if question is None:
        raise WorkRefused("No such metric.")
    if not question.asked:
        raise WorkRefused("This task and kind are not part of the study's survey.")


def _attach(vote: Any, question: SurveyQuestion) -> None:
    """What the answer shows of the vote, without reading it again."""
    if (vote.task_id, vote.kind_id) == (question.task.pk, question.unit["kind_id"]):
        metric = next((m for m in question.metrics if m.pk == vote.metric_id), None)
        if metric is not None:
            vote.task, vote.kind, vote.metric = question.task, question.kind, metric
            vote.survey_question = question


SURVEY = register(SurveyWork())


def question_of(vote: ExpertVote) -> SurveyQuestion | None:
    """The question a vote just saved answers (read by the submit), if it carries it."""
    return getattr(vote, "survey_question", None)


def expert_vote_submit(
    *,
    study: Study,
    expert,
    kind_id: int,
    metric_id: int,
    idempotency_key: uuid.UUID,
) -> Saved[ExpertVote]:
    """Save (or change) the expert's vote for (the metric's task, kind); repeats save once."""
    return SURVEY.submit(
        study=study,
        person=expert,
        unit={"kind_id": kind_id},
        answer={"metric": metric_id},
        idempotency_key=idempotency_key,
    )
