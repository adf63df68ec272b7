"""Gold validation on the shared base (docs/adversarial.md): three labels per adversarial
text of the study's plan, handed out, saved once, refused elsewhere; the page shows the task,
the source and the criterion, never the judges' scores; the API does the same."""

from __future__ import annotations

import re
import uuid

import pytest
from django.urls import reverse

from apps.annotation.models import GoldCheck, GoldCheckSlot, JudgementChange
from apps.annotation.services import GOLD_CHECK, WorkRefused, gold_check_submit
from tests.annotation.recent import recent_list
from tests.factories import PerturbationFactory
from tests.judging.conftest import (
    demo,  # noqa: F401  (a fixture)
    fake_openai_server,  # noqa: F401  (a fixture)
)
from tests.judging.scripted_search import searched_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def searched(demo, fake_openai_server):  # noqa: F811
    return searched_study(demo, fake_openai_server, items=2)


def label(searched, annotator, perturbation, good, key=None):
    return gold_check_submit(
        study=searched.study,
        annotator=annotator,
        perturbation_id=perturbation.pk,
        good=good,
        idempotency_key=key or uuid.uuid4(),
    )


def test_each_adversarial_text_needs_three_labels(searched):
    study = searched.study
    assert GOLD_CHECK.setup.opted_in(study)
    slots = GoldCheckSlot.objects.filter(study=study)
    assert slots.count() == 2 * 3
    assert set(slots.values_list("perturbation_id", flat=True)) == {
        p.pk for p in searched.texts.values()
    }
    first, second, third = searched.annotators
    seen = set()
    for person in (first, second, third):
        for _ in range(2):
            slot = GOLD_CHECK.next(study=study, person=person)
            seen.add((person.pk, slot.perturbation_id))
            label(searched, person, slot.perturbation, good=True)
        assert GOLD_CHECK.next(study=study, person=person) is None
    assert len(seen) == 6 and not slots.filter(done_at__isnull=True).exists()
    assert GoldCheck.objects.filter(study=study).count() == 6
    assert JudgementChange.objects.filter(study=study, judgement="gold-check").count() == 6


def test_a_label_is_saved_once_and_only_on_adversarial_texts(searched):
    study, person = searched.study, searched.annotators[0]
    slot = GOLD_CHECK.next(study=study, person=person)
    key = uuid.uuid4()
    first = label(searched, person, slot.perturbation, good=False, key=key)
    again = label(searched, person, slot.perturbation, good=False, key=key)
    assert first.new and not again.new and GoldCheck.objects.count() == 1
    other = PerturbationFactory(item=slot.perturbation.item)
    with pytest.raises(WorkRefused, match="adversarial"):
        label(searched, person, other, good=True)
    assert GoldCheck.objects.count() == 1


def test_the_page_shows_task_source_criterion_and_text_not_the_scores(client, searched):
    study, person = searched.study, searched.annotators[0]
    client.force_login(person)
    detail = client.get(reverse("study-detail", args=[study.pk])).content.decode()
    assert "Check adversarial texts" in detail
    page = client.get(reverse("gold-check-next", args=[study.pk]))
    html = page.content.decode()
    item = page.context["item"]
    assert page.status_code == 200 and item.held
    assert item.perturbation.text in html and item.perturbation.item.source in html
    assert 'id="criterion"' in html and item.criterion_text
    assert 'id="task"' in html
    work = html.split('id="work"')[1]
    for secret in ("S_gold", "S_victim", "Adversarial R", "victim"):
        assert secret not in work, secret
    # the gold score (90) is not shown; the form's random idempotency key may contain "90"
    assert not re.search(r"\b90\b", re.sub(r"<[^>]*>", " ", work))
    response = client.post(
        reverse("gold-check-submit", args=[study.pk, item.perturbation.pk]),
        {"good": "1", "idempotency_key": str(uuid.uuid4())},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    assert GoldCheck.objects.get(annotator=person).good is True
    recent = recent_list(client, response.content.decode())
    link = reverse("gold-check-item", args=[study.pk, item.perturbation.pk])
    assert f'<a href="{link}" hx-get="{link}"' in recent  # the label just given, to change


def test_the_api_hands_out_and_takes_labels(api_client, searched):
    study, person = searched.study, searched.annotators[1]
    api_client.force_authenticate(person)
    item = api_client.post(f"/api/v1/studies/{study.pk}/gold-checks/next/").json()
    assert item["criterion_text"] and item["text"].startswith("Answer at level 3")
    assert "s_gold" not in item and "kind" not in item
    saved = api_client.post(
        f"/api/v1/studies/{study.pk}/gold-checks/",
        {"perturbation": item["perturbation"], "good": False, "idempotency_key": str(uuid.uuid4())},
        format="json",
    )
    assert saved.status_code == 201 and saved.json()["good"] is False
    mine = api_client.get(f"/api/v1/studies/{study.pk}/gold-checks/").json()
    assert [g["perturbation"] for g in mine["results"]] == [item["perturbation"]]


def test_a_study_without_adversarial_texts_has_no_such_work(demo):  # noqa: F811
    assert not GOLD_CHECK.setup.opted_in(demo)
    assert not GoldCheckSlot.objects.exists()


def test_the_study_page_shows_gold_labels_as_a_stage_when_there_are_some(client, searched):
    study, person = searched.study, searched.annotators[0]
    client.force_login(study.owner)

    def gold_figures() -> dict[str, int]:
        page = client.get(reverse("study-detail", args=[study.pk]))
        assert 'id="stage-gold"' in page.content.decode()
        stages = {stage.key: stage for stage in page.context["pipeline"]}
        return {f.label: f.value for f in stages["gold"].figures}

    assert gold_figures() == {"labels done": 0, "labels planned": 6}
    slot = GOLD_CHECK.next(study=study, person=person)
    label(searched, person, slot.perturbation, good=True)
    assert gold_figures() == {"labels done": 1, "labels planned": 6}


def test_a_study_without_adversarial_texts_shows_no_gold_stage(client, demo):  # noqa: F811
    client.force_login(demo.owner)
    page = client.get(reverse("study-detail", args=[demo.pk]))
    assert "gold" not in {stage.key for stage in page.context["pipeline"]}
