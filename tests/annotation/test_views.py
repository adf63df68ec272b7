"""The home page and study page show a user only their own studies."""

import re

import pytest
from django.contrib.auth import get_user_model

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


def test_the_demo_researcher_is_not_sent_to_an_empty_admin(client, catalog):
    """The demo researcher sets a study up from the pages: the menu offers no "Admin" link
    leading to a site where they may do nothing."""
    demo_load()
    client.force_login(get_user_model().objects.get(username="researcher"))
    body = client.get("/").content.decode()
    assert 'href="/studies/new/"' in body
    assert 'href="/admin/"' not in body


def test_the_raw_data_section_points_to_the_api_docs(client, catalog):
    """The owner's raw-data downloads say where the same files come from in the API: a link to
    its documentation, not the name of a file of the repository."""
    study = demo_load()
    client.force_login(study.owner)
    body = client.get(f"/studies/{study.pk}/").content.decode()
    assert 'come from the <a href="/api/v1/docs/">API</a>' in body
    assert "docs/api.md" not in body


def test_the_progress_figures_each_say_what_they_count(client, catalog):
    """Each figure at the top of the progress page has its own label: the slots held now are
    told apart by the work they belong to (vetting, direct assessment)."""
    study = demo_load()
    client.force_login(study.owner)
    body = client.get(f"/studies/{study.pk}/progress/").content.decode()
    labels = re.findall(r"<dt>([^<]+)</dt>", body)
    assert "Vetting slots held now" in labels
    assert len(labels) == len(set(labels)), labels
