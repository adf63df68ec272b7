"""Expert votes (methods §4): the metric of a task most affected by a perturbation kind.

The survey hands out all its units at once (one card per task x kind, on one page): no
slots, no "next" and no skip; saving goes through the shared `Work.submit`.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from apps.accounts.models import Role
from apps.annotation.models import ExpertVote, Study
from apps.annotation.selectors.survey import SurveyQuestion, survey_question
from apps.annotation.services.errors import WorkRefused
from apps.annotation.services.work import Saved, Unit, Work, register


class SurveyWork(Work):
    slug, name, action = "survey", "Expert survey", "Expert survey"
    position = 9
    model = ExpertVote
    role = Role.EXPERT
    answer_keys = ("metric",)
    answer_noun = "vote"
    answers_figure = ("votes", "Expert votes", "vote-count")

    def submit(
        self,
        *,
        study: Study,
        person,
        unit: Unit,
        answer: Mapping[str, Any],
        idempotency_key: uuid.UUID,
        based_on: int | None = None,
    ) -> Saved[Any]:
        """The shared submit, on the vote's question: (the metric's task, the kind), refused
        unless the survey asks it. The question is read once (with what the page shows of
        it) and the saved vote carries it (`question_of`)."""
        question = survey_question(
            study, expert=person, kind_id=unit["kind_id"], metric_id=answer["metric"]
        )
        if question is None:
            raise WorkRefused("No such metric.")
        if not question.asked:
            raise WorkRefused("This task and kind are not part of the study's survey.")
        saved = super().submit(
            study=study,
            person=person,
            unit=question.unit,
            answer=answer,
            idempotency_key=idempotency_key,
            based_on=based_on,
        )
        vote = saved.judgement
        if (vote.task_id, vote.kind_id) == (question.task.pk, question.unit["kind_id"]):
            # What the answer shows of the vote, without reading it again.
            metric = next((m for m in question.metrics if m.pk == vote.metric_id), None)
            if metric is not None:
                vote.task, vote.kind, vote.metric = question.task, question.kind, metric
                vote.survey_question = question
        return saved

    def values(self, *, study, person, unit, answer, earlier, slot, held=None) -> dict[str, Any]:
        return {"metric_id": answer["metric"]}

    def label(self, judgement: Any) -> str:
        return f"{judgement.kind.name} → {judgement.metric.name}"


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
