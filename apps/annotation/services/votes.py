"""Expert votes (methods §4): the metric of a task most affected by a perturbation kind."""

from __future__ import annotations

import uuid

from apps.annotation.models import ExpertVote, JudgementChange, Study
from apps.annotation.selectors.survey import survey_tasks
from apps.annotation.services.errors import WorkRefused
from apps.annotation.services.saving import locked_or_created, snapshot, submit_once
from apps.annotation.services.vetting import Saved
from apps.catalog.models import Metric

VOTE_FIELDS = ("metric",)


def expert_vote_submit(
    *,
    study: Study,
    expert,
    kind_id: int,
    metric_id: int,
    idempotency_key: uuid.UUID,
) -> Saved[ExpertVote]:
    """Save (or change) the expert's vote for (the metric's task, kind); repeats save once."""
    metric = Metric.objects.select_related("task").filter(pk=metric_id).first()
    if metric is None:
        raise WorkRefused("No such metric.")
    if not any(
        task.pk == metric.task_id and kind.pk == kind_id for task, kind in survey_tasks(study)
    ):
        raise WorkRefused("This task and kind are not part of the study's survey.")

    def save() -> JudgementChange:
        vote, before = locked_or_created(
            ExpertVote,
            lookup={
                "study": study,
                "expert": expert,
                "task_id": metric.task_id,
                "kind_id": kind_id,
            },
            values={"metric": metric},
            fields=VOTE_FIELDS,
        )
        return JudgementChange.objects.create(
            study=study,
            user=expert,
            judgement=JudgementChange.Judgement.EXPERT_VOTE,
            expert_vote=vote,
            idempotency_key=idempotency_key,
            before=before,
            after=snapshot(vote, VOTE_FIELDS),
        )

    change, new = submit_once(
        key=idempotency_key,
        user=expert,
        judgement=JudgementChange.Judgement.EXPERT_VOTE,
        answer={"metric": metric.pk},
        save=save,
    )
    assert change.expert_vote is not None
    return Saved(change.expert_vote, new)
