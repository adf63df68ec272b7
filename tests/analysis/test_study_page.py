"""The study page: its researcher sees the pipeline in order with the next action at each
stage; annotators and experts see their work instead."""

import pytest
from django.urls import reverse

from tests.annotation.factories import study_setup
from tests.factories import StudyFactory

pytestmark = pytest.mark.django_db


def _stages(response) -> dict[str, object]:
    return {stage.key: stage for stage in response.context["pipeline"]}


def test_an_empty_study_says_what_to_do_first(client, researcher):
    study = StudyFactory(owner=researcher, plan_problem="Group 1 has fewer annotators than…")
    client.force_login(researcher)
    response = client.get(reverse("study-detail", args=[study.pk]))
    stages = _stages(response)
    assert list(stages) == [
        "data",
        "perturbations",
        "vetting",
        "comparisons",
        "assessment",
        "votes",
        "judging",
        "reports",
    ]
    assert stages["data"].next_url == reverse("import-new")
    assert stages["perturbations"].next_label == "Choose kinds"
    assert stages["vetting"].next_label == "Add annotators"
    assert stages["votes"].next_label == "Add an expert"
    assert stages["assessment"].next_label == "Choose criteria"  # direct assessment: optional
    assert f"study={study.pk}" in stages["judging"].next_url
    assert stages["reports"].next_url == reverse("report-index", args=[study.pk])
    assert stages["comparisons"].problem == study.plan_problem
    assert "Raw data" in response.text and "fewer annotators than" in response.text


def test_a_planned_study_shows_its_counts(client):
    setup = study_setup(perturbations=3, annotators=2, aspects=1, vetted_only_default=True)
    empty = StudyFactory(owner=setup.study.owner, vetted_only_default=False)
    client.force_login(setup.study.owner)
    judging = _stages(client.get(reverse("study-detail", args=[empty.pk])))["judging"]
    assert "vetted_only=false" in judging.next_url
    client.force_login(setup.study.owner)
    response = client.get(reverse("study-detail", args=[setup.study.pk]))
    stages = _stages(response)
    figures = {f.label: f.value for f in stages["vetting"].figures}
    assert figures == {"annotators": 2, "vettings done": 0, "vettings planned": 3}
    assert stages["vetting"].next_label == "Watch progress"
    assert "vetted_only=true" in stages["judging"].next_url
    assert 'id="perturbation-count">3<' in response.text


def test_annotators_see_their_work_not_the_pipeline(client):
    setup = study_setup(perturbations=1, annotators=1)
    client.force_login(setup.annotators[0])
    response = client.get(reverse("study-detail", args=[setup.study.pk]))
    assert "pipeline" not in response.context and "Vet perturbations" in response.text
    assert "Edit the study" not in response.text and "Raw data" not in response.text
