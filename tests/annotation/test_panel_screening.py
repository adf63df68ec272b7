"""The attention check (docs/annotation.md, "Recruiting a panel"): control items screen a
participant within their first units; one who fails more than allowed is stopped politely
with the screened-out code, and their answers are kept but left out of the reports unless
the panel counts them."""

from __future__ import annotations

import pytest
from django.test import Client

from apps.analysis.controls import analysed, excluded_note
from apps.annotation.models import Panel, Participant, Vetting
from tests.annotation.panel_calls import arrive, vet_answer, vet_next
from tests.annotation.test_controls import vetting_controls
from tests.annotation.test_panel_quotas import panel_study

pytestmark = pytest.mark.django_db
SCREENED_URL = "https://app.prolific.com/submissions/complete?cc=SCR33N"


@pytest.fixture
def setup():
    setup = panel_study(perturbations=10, quota=8, control_every=2)
    setup.controls = {c.perturbation_id for c in vetting_controls(setup.study, 6)}
    Panel.objects.filter(study=setup.study).update(
        screen_items=4,
        screen_failures=0,
        screened_out_code="SCR33N",
        screened_out_url=SCREENED_URL,
    )
    return setup


def work(client: Client, setup, careful: bool) -> int:
    """Answer until stopped: a careful participant gets the control items right."""
    answered = 0
    while (unit := vet_next(client, setup.study.pk)) is not None:
        right = careful and unit in setup.controls
        vet_answer(client, setup.study.pk, unit, "invalid" if right else "valid")
        answered += 1
    client.get(f"/studies/{setup.study.pk}/participant/?after=vetting")  # where they are sent
    return answered


def test_a_participant_failing_the_attention_check_is_stopped_politely(setup):
    client = Client()
    arrive(client, setup.link, "PROLIFIC_PID=careless")
    answered = work(client, setup, careful=False)
    assert answered <= 4  # stopped within the first four units
    page = client.get(f"/studies/{setup.study.pk}/participant/").content.decode()
    assert 'id="screened-out"' in page and '<strong id="code">SCR33N</strong>' in page
    assert f'content="5;url={SCREENED_URL}"' in page
    participant = Participant.objects.get()
    assert participant.status == "screened-out"
    assert Vetting.answers.filter(annotator=participant.user).exists()  # answers kept
    assert vet_next(client, setup.study.pk) is None  # and nothing more handed out


def test_a_careful_participant_goes_on_to_their_quota(setup):
    client = Client()
    arrive(client, setup.link, "PROLIFIC_PID=careful")
    assert work(client, setup, careful=True) == 8
    assert Participant.objects.get().status == "complete"


def test_the_researcher_may_allow_some_failures(setup):
    Panel.objects.filter(study=setup.study).update(screen_failures=3)
    client = Client()
    arrive(client, setup.link, "PROLIFIC_PID=careless")
    assert work(client, setup, careful=False) == 8  # at most 2 controls in the first 4
    assert Participant.objects.get().status == "complete"


def test_screened_out_answers_are_left_out_of_reports_unless_counted(setup):
    # One failure allowed: the second control of the first four stops them, so they have
    # given a real answer first (the first block of two holds one control, one real unit).
    Panel.objects.filter(study=setup.study).update(screen_failures=1)
    careless, careful = Client(), Client()
    arrive(careless, setup.link, "PROLIFIC_PID=careless")
    arrive(careful, setup.link, "PROLIFIC_PID=careful")
    work(careless, setup, careful=False)
    work(careful, setup, careful=True)
    stopped = Participant.objects.get(external_id="careless").user
    study = setup.study
    assert Vetting.objects.filter(annotator=stopped).exists()
    assert not analysed(Vetting, study).filter(annotator=stopped).exists()
    assert (
        analysed(Vetting, study).count()
        == 8
        - Vetting.answers.filter(
            annotator__participant__external_id="careful", control__isnull=False
        ).count()
    )
    assert "1 recruited participant screened out" in excluded_note(study)
    Panel.objects.filter(study=study).update(report_screened_out=True)
    assert analysed(Vetting, study).filter(annotator=stopped).exists()
    assert excluded_note(study) == ""


def test_a_screened_out_participant_gives_back_what_they_hold_and_saves_nothing_more(setup):
    from apps.annotation.models import VettingSlot
    from apps.annotation.services import VETTING
    from apps.annotation.services.participation import participant_finish

    client = Client()
    arrive(client, setup.link, "PROLIFIC_PID=careless")
    participant = Participant.objects.get()
    held = VETTING.next(study=setup.study, person=participant.user).perturbation_id  # a tab
    participant_finish(participant=participant, status="screened-out")
    assert not VettingSlot.objects.filter(annotator=participant.user).exists()  # open again
    assert vet_answer(client, setup.study.pk, held, "valid").status_code == 403
    assert not Vetting.answers.filter(annotator=participant.user).exists()
