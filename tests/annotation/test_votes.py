"""Expert votes and the weights they give each kind."""

import uuid

import pytest

from apps.analysis.progress import kind_weights
from apps.annotation.models import ExpertVote
from apps.annotation.selectors.survey import survey_cards
from apps.annotation.services import WorkRefused, expert_vote_submit
from apps.catalog.models import Metric
from tests.annotation.factories import study_setup
from tests.factories import KindFactory

pytestmark = pytest.mark.django_db


def test_votes_give_vote_shares_per_kind():
    setup = study_setup(perturbations=1, kinds=2, experts=10)
    kind = setup.kinds[0]
    coherence, consistency, fluency = Metric.objects.filter(task__slug="summarization")
    picks = [coherence] * 4 + [consistency] + [fluency] * 5
    for expert, metric in zip(setup.experts, picks, strict=True):
        expert_vote_submit(
            study=setup.study,
            expert=expert,
            kind_id=kind.pk,
            metric_id=metric.pk,
            idempotency_key=uuid.uuid4(),
        )
    rows = {row.kind.pk: row for row in kind_weights(setup.study)}
    assert [(n, w) for _, n, w in rows[kind.pk].cells] == [(4, 0.4), (1, 0.1), (5, 0.5)]
    assert [w for _, _, w in rows[setup.kinds[1].pk].cells] == [None, None, None]
    cards = survey_cards(setup.study, setup.experts[0])
    assert len(cards) == 2 and cards[0].chosen_metric_id in (coherence.pk, None)


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
