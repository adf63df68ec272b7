"""Quotas and completion for recruited participants (docs/annotation.md, "Recruiting a
panel"): the hand-out never gives a participant more than their quota; when it is done, or
nothing is left for them, they see the completion code and go back to the platform."""

from __future__ import annotations

import uuid

import pytest
from django.test import Client

from apps.annotation.models import ControlServe, Panel, Participant, Vetting, VettingSlot
from apps.annotation.services import VETTING
from apps.annotation.services.controls import hand_out
from apps.annotation.services.panel import panel_link_open
from apps.annotation.services.participation import units_used
from tests.annotation.factories import study_setup
from tests.annotation.panel_calls import arrive, vet_answer, vet_next, vet_until_done
from tests.annotation.test_controls import vetting_controls

pytestmark = pytest.mark.django_db
COMPLETE = "https://app.prolific.com/submissions/complete?cc=C0DE"


def panel_study(*, perturbations: int = 6, quota: int | None = 3, **settings):
    setup = study_setup(perturbations=perturbations, annotators=0, **settings)
    Panel.objects.create(
        study=setup.study,
        items_per_participant=quota,
        completion_code="C0DE",
        completion_url=COMPLETE,
    )
    setup.link = panel_link_open(study=setup.study)  # type: ignore[attr-defined]
    return setup


def test_a_participant_does_their_quota_then_sees_the_code_and_goes_back(client):
    setup = panel_study(quota=3)
    study = setup.study
    arrive(client, setup.link, "PROLIFIC_PID=aaa111")
    assert len(vet_until_done(client, study.pk)) == 3
    done = client.get(f"/studies/{study.pk}/participant/?after=vetting")
    text = done.content.decode()
    assert done.status_code == 200
    assert '<strong id="code">C0DE</strong>' in text
    assert f'content="5;url={COMPLETE}"' in text and f'href="{COMPLETE}"' in text
    participant = Participant.objects.get()
    assert participant.status == "complete" and participant.finished_at
    assert Vetting.objects.filter(annotator=participant.user).count() == 3
    # Coming back later: still done, nothing more handed out.
    again = client.get(f"/studies/{study.pk}/vet/", follow=True)
    assert b"C0DE" in again.content
    assert VettingSlot.objects.filter(annotator=participant.user, done_at__isnull=True).count() == 0


def test_htmx_sends_the_whole_page_to_the_code_after_the_last_answer(client):
    setup = panel_study(quota=1)
    study = setup.study
    arrive(client, setup.link, "participant=p1")
    perturbation = vet_next(client, study.pk)
    answered = client.post(
        f"/studies/{study.pk}/vet/{perturbation}/verdict/",
        {"idempotency_key": str(uuid.uuid4()), "verdict": "valid"},
        HTTP_HX_REQUEST="true",
    )
    assert answered["HX-Redirect"] == f"/studies/{study.pk}/participant/?after=vetting"
    assert b"C0DE" in client.get(answered["HX-Redirect"]).content


def test_when_nothing_is_left_before_the_quota_they_are_done_too(client):
    setup = panel_study(perturbations=2, quota=5)
    arrive(client, setup.link, "participant=p1")
    assert len(vet_until_done(client, setup.study.pk)) == 2
    assert b"C0DE" in client.get(f"/studies/{setup.study.pk}/participant/").content
    assert Participant.objects.get().status == "complete"


def test_without_a_quota_they_do_what_there_is():
    setup = panel_study(perturbations=4, quota=None)
    client = Client()
    arrive(client, setup.link, "participant=p1")
    assert len(vet_until_done(client, setup.study.pk)) == 4


def test_a_unit_held_counts_and_another_tab_gets_the_same_one():
    setup = panel_study(quota=1)
    study = setup.study
    first, second = Client(), Client()
    arrive(first, setup.link, "participant=p1")
    arrive(second, setup.link, "participant=p1")  # the same participant, another browser
    held = vet_next(first, study.pk)
    assert vet_next(second, study.pk) == held
    participant = Participant.objects.get()
    assert units_used(study=study, person=participant.user) == 1
    assert VettingSlot.objects.filter(annotator=participant.user).count() == 1


def test_a_skipped_unit_does_not_use_the_quota():
    setup = panel_study(quota=2)
    study = setup.study
    client = Client()
    arrive(client, setup.link, "participant=p1")
    skipped = vet_next(client, study.pk)
    client.post(f"/studies/{study.pk}/vet/{skipped}/skip/")
    assert len(vet_until_done(client, study.pk)) == 2


def test_control_items_count_in_the_quota():
    setup = panel_study(perturbations=8, quota=4, control_every=2)
    vetting_controls(setup.study, 4)
    client = Client()
    arrive(client, setup.link, "participant=p1")
    assert len(vet_until_done(client, setup.study.pk)) == 4
    person = Participant.objects.get().user
    real = Vetting.objects.filter(annotator=person).count()
    controls = ControlServe.objects.filter(annotator=person, answered_at__isnull=False).count()
    assert controls >= 1 and real + controls == 4


def test_the_hand_out_itself_holds_the_quota():
    """The work core's hand-out, called directly (as the API and pages do), stops at it."""
    setup = panel_study(quota=2)
    study = setup.study
    client = Client()
    arrive(client, setup.link, "participant=p1")
    person = Participant.objects.get().user
    for _ in range(2):
        slot = hand_out(VETTING, study=study, person=person)
        vet_answer(client, study.pk, slot.perturbation_id)
    assert hand_out(VETTING, study=study, person=person) is None
    assert VETTING.next(study=study, person=person) is not None  # the type's own: no quota
