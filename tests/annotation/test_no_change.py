"""A perturbation equal to its original carries a visible "no change" badge in vetting."""

import pytest

from apps.corpus.models import Perturbation
from tests.annotation.factories import study_setup

pytestmark = pytest.mark.django_db


def _vetting_page(client, setup) -> str:
    client.force_login(setup.annotators[0])
    response = client.get(f"/studies/{setup.study.pk}/vet/")
    assert response.status_code == 200
    return response.content.decode()


def test_an_unchanged_perturbation_shows_no_change(client):
    setup = study_setup(perturbations=2, annotators=1)
    for p in setup.perturbations:
        Perturbation.objects.filter(pk=p.pk).update(text=p.item.original, diff={})
    body = _vetting_page(client, setup)
    assert 'id="no-change"' in body and ">no change</em>" in body


def test_a_changed_perturbation_shows_no_such_badge(client):
    setup = study_setup(perturbations=1, annotators=1)
    assert 'id="no-change"' not in _vetting_page(client, setup)
