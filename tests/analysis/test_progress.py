"""The researcher's progress page and API, from the analysis app: each kind's expert weights
(methods §4) from the study's votes. (Its pages and roles: tests/annotation/test_pages.py and
test_api.py; agreement: test_reports.py and test_collected_ratings.py.)"""

import uuid

import pytest

from apps.analysis.progress import kind_weights
from apps.annotation.selectors.survey import survey_cards
from apps.annotation.services import expert_vote_submit
from apps.catalog.models import Metric
from tests.annotation.factories import study_setup

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
