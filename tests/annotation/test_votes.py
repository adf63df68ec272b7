"""Expert votes: saved once per key, changed with history, only for the survey's kinds (the
weights they give each kind: tests/analysis/test_progress.py)."""

import uuid

import pytest

from apps.annotation.models import ExpertVote
from apps.annotation.services import WorkRefused, expert_vote_submit
from apps.catalog.models import Metric, Task
from tests.annotation.factories import study_setup
from tests.factories import KindFactory

pytestmark = pytest.mark.django_db


def test_a_vote_can_change_and_repeats_save_once():
    setup = study_setup(perturbations=1, experts=1)
    expert, kind = setup.experts[0], setup.kinds[0]
    metrics = list(Metric.objects.filter(task__slug="summarization"))
    key = uuid.uuid4()
    args = {"study": setup.study, "expert": expert, "kind_id": kind.pk}
    expert_vote_submit(**args, metric_id=metrics[0].pk, idempotency_key=key)
    expert_vote_submit(**args, metric_id=metrics[0].pk, idempotency_key=key)
    vote = expert_vote_submit(**args, metric_id=metrics[1].pk, idempotency_key=uuid.uuid4())
    assert ExpertVote.objects.count() == 1 and vote.judgement.metric == metrics[1]
    assert vote.judgement.changes.count() == 2


def test_kinds_outside_the_study_are_refused():
    setup = study_setup(perturbations=1, experts=1)
    metric = Metric.objects.filter(task__slug="summarization").first()
    with pytest.raises(WorkRefused):
        expert_vote_submit(
            study=setup.study,
            expert=setup.experts[0],
            kind_id=KindFactory().pk,
            metric_id=metric.pk,
            idempotency_key=uuid.uuid4(),
        )


def test_votes_on_questions_the_survey_does_not_ask_are_refused():
    """A metric of a task the study has no text of, a kind made for another task, a
    metric that does not exist: nothing is saved."""
    setup = study_setup(perturbations=1, experts=1)
    kind = setup.kinds[0]
    elsewhere = Task.objects.create(slug="qa-elsewhere", name="Question answering")
    other_task = Metric.objects.create(task=elsewhere, slug="exactness", name="Exactness")
    summary = Metric.objects.filter(task__slug="summarization").first()
    kind_elsewhere = KindFactory(task=other_task.task)
    setup.study.kinds.add(kind_elsewhere)
    for kind_id, metric_id, why in (
        (kind.pk, other_task.pk, "not part of the study's survey"),
        (kind_elsewhere.pk, summary.pk, "not part of the study's survey"),
        (kind.pk, 0, "No such metric"),
    ):
        with pytest.raises(WorkRefused, match=why):
            expert_vote_submit(
                study=setup.study,
                expert=setup.experts[0],
                kind_id=kind_id,
                metric_id=metric_id,
                idempotency_key=uuid.uuid4(),
            )
    assert not ExpertVote.objects.exists()
