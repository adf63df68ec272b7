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
from apps.annotation.selectors.survey import survey_tasks
from apps.annotation.services.errors import WorkRefused
from apps.annotation.services.work import Saved, Unit, Work, register
from apps.catalog.models import Metric


class SurveyWork(Work):
    slug, name, action = "survey", "Expert survey", "Expert survey"
    position = 9
    model = ExpertVote
    role = Role.EXPERT
    answer_keys = ("metric",)
    answer_noun = "vote"
    answers_figure = ("votes", "Expert votes", "vote-count")

    def checked(self, *, study: Study, unit: Unit, answer: Mapping[str, Any]) -> Unit:
        """The vote's unit is the (metric's task, kind): refused unless the survey asks it."""
        metric = Metric.objects.filter(pk=answer["metric"]).values_list("task_id").first()
        if metric is None:
            raise WorkRefused("No such metric.")
        unit = {"task_id": metric[0], "kind_id": unit["kind_id"]}
        if not any(
            (task.pk, kind.pk) == (unit["task_id"], unit["kind_id"])
            for task, kind in survey_tasks(study)
        ):
            raise WorkRefused("This task and kind are not part of the study's survey.")
        return unit

    def values(self, *, study, person, unit, answer, earlier, slot, held=None) -> dict[str, Any]:
        return {"metric_id": answer["metric"]}

    def label(self, judgement: Any) -> str:
        return f"{judgement.kind.name} → {judgement.metric.name}"


SURVEY = register(SurveyWork())


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
