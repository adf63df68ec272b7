"""The home page and study page show a user only their own studies."""

import pytest

from apps.annotation.demo import demo_load
from tests.factories import MembershipFactory, StudyFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_home_lists_only_my_studies(client, annotator):
    mine = MembershipFactory(user=annotator).study
    StudyFactory(name="Someone else's")
    client.force_login(annotator)
    body = client.get("/").content.decode()
    assert mine.name in body and "Someone else's" not in body


def test_study_page_is_404_for_outsiders(client, annotator):
    study = StudyFactory()
    client.force_login(annotator)
    assert client.get(f"/studies/{study.pk}/").status_code == 404


def test_demo_study_page_shows_counts(client, catalog):
    study = demo_load()
    client.force_login(UserFactory(username="annotator"))
    body = client.get(f"/studies/{study.pk}/").content.decode()
    assert '<dd id="item-count">6</dd>' in body
    assert '<dd id="perturbation-count">14</dd>' in body


def test_demo_load_is_idempotent(catalog):
    first = demo_load()
    second = demo_load()
    assert first.pk == second.pk
    assert second.memberships.count() == 2
