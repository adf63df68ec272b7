"""Reviewing a recruited panel (docs/annotation.md, "Recruiting a panel"): each participant's
progress, control accuracy, answers and time on task; approve or reject with a reason; the
decisions as the platforms import them."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from apps.analysis.panel_review import panel_figures
from apps.annotation.models import JudgementChange, Participant
from tests.annotation.panel_calls import arrive, vet_until_done
from tests.annotation.test_controls import vetting_controls
from tests.annotation.test_panel_quotas import panel_study
from tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def setup():
    setup = panel_study(perturbations=12, quota=4, control_every=2)
    vetting_controls(setup.study, 6)  # known answer: invalid
    for pid, verdict in (("alice-pid", "invalid"), ("bob-pid", "valid")):
        client = Client()
        arrive(client, setup.link, f"PROLIFIC_PID={pid}")
        vet_until_done(client, setup.study.pk, verdict)
    return setup


def review_url(study, tail: str = "") -> str:
    return f"/studies/{study.pk}/panel/{tail}"


def test_the_review_page_shows_each_participants_progress_accuracy_and_time(client, setup):
    study = setup.study
    alice = Participant.objects.get(external_id="alice-pid")
    saves = JudgementChange.objects.filter(user=alice.user).order_by("id")
    for save, seconds in zip(saves, (30, 30, 30, 60), strict=True):  # as her pages measured
        saves.filter(pk=save.pk).update(active_seconds=seconds)
    review = {f.participant.external_id: f for f in panel_figures(study).participants}
    alice_time = review["alice-pid"].time
    assert alice_time is not None and alice_time.total_seconds == 150
    assert alice_time.per_item.value == 30 and alice_time.per_item.n == 4
    assert review["bob-pid"].time.total_seconds == 20  # 5 s each, as panel_calls sends
    assert review["alice-pid"].row.answered == review["bob-pid"].row.answered == 4
    accuracy = {pid: review[pid].controls.estimate.value for pid in ("alice-pid", "bob-pid")}
    assert accuracy == {"alice-pid": 1.0, "bob-pid": 0.0}
    assert review["bob-pid"].row.same_answer == 1.0  # answered "valid" throughout
    client.force_login(study.owner)
    page = client.get(review_url(study, "participants/"))
    text = page.content.decode()
    assert page.status_code == 200
    assert "alice-pid" in text and "bob-pid" in text
    assert "Median active time per person" in text and "Median active time per unit" in text
    assert "1.00 [" in text and "0.00 [" in text  # accuracy, with its interval
    assert "2 min 30 s" in text  # alice's active time: 3 x 30 s and 60 s


def test_the_review_page_reads_in_bulk(client, setup):
    """As many queries with 7 participants as with 2: none per participant."""
    client.force_login(setup.study.owner)

    def queries() -> int:
        with CaptureQueriesContext(connection) as done:
            assert client.get(review_url(setup.study, "participants/")).status_code == 200
        return len(done)

    before = queries()
    for n in range(5):
        arrive(Client(), setup.link, f"participant=more-{n}")
    assert queries() == before <= 24


def test_approve_reject_with_a_reason_and_download_the_decisions(client, setup):
    study = setup.study
    alice = Participant.objects.get(external_id="alice-pid")
    bob = Participant.objects.get(external_id="bob-pid")
    client.force_login(study.owner)
    decide = review_url(study, "participants/{}/decide/")
    client.post(decide.format(alice.pk), {"decision": "approved"})
    refused = client.post(decide.format(bob.pk), {"decision": "rejected"}, follow=True)
    assert b"a rejection needs its reason" in refused.content
    bob.refresh_from_db()
    assert bob.decision == ""
    client.post(
        decide.format(bob.pk), {"decision": "rejected", "reason": "=Failed the attention checks"}
    )
    download = client.get(review_url(study, "decisions.csv"))
    assert download["Content-Type"].startswith("text/csv")
    assert "attachment" in download["Content-Disposition"]
    rows = list(csv.reader(io.StringIO(download.content.decode())))
    assert rows == [
        ["participant_id", "decision", "reason"],
        ["alice-pid", "approved", ""],
        ["bob-pid", "rejected", "'=Failed the attention checks"],  # no formula in a sheet
    ]


def test_only_the_studys_researchers_review(client, setup):
    study = setup.study
    annotator = UserFactory(role="annotator")
    MembershipFactory(study=study, user=annotator, role="annotator")
    participant = Participant.objects.first()
    for user, status in (
        (annotator, 403),
        (participant.user, 403),
        (UserFactory(role="researcher"), 404),
    ):
        client.force_login(user)
        assert client.get(review_url(study, "participants/")).status_code == status
        assert client.get(review_url(study, "decisions.csv")).status_code == status
        decided = client.post(
            review_url(study, f"participants/{participant.pk}/decide/"), {"decision": "approved"}
        )
        assert decided.status_code == status
    participant.refresh_from_db()
    assert participant.decision == ""


def test_the_raw_data_has_each_participants_time_on_task(client, setup):
    study = setup.study
    client.force_login(study.owner)
    download = client.get(f"/studies/{study.pk}/data/participants.csv")
    rows = {
        row["participant_id"]: row
        for row in csv.DictReader(io.StringIO(b"".join(download.streaming_content).decode()))
    }
    assert set(rows) == {"alice-pid", "bob-pid"}
    assert rows["alice-pid"]["status"] == "complete"
    assert (rows["alice-pid"]["controls_right"], rows["bob-pid"]["controls_right"]) == ("2", "0")
    assert rows["alice-pid"]["answered"] == "4"
    assert (
        rows["alice-pid"]["annotator"]
        == Participant.objects.get(external_id="alice-pid").user.username
    )
    assert json.loads(rows["alice-pid"]["item_seconds"]) == [5.0, 5.0, 5.0, 5.0]
    assert rows["alice-pid"]["active_seconds"] == "20.0"
    jsonl = client.get(f"/studies/{study.pk}/data/participants.jsonl")
    lines = b"".join(jsonl.streaming_content).decode().splitlines()
    assert {json.loads(line)["participant_id"] for line in lines} == {"alice-pid", "bob-pid"}


def test_agreement_with_the_others_on_the_same_units():
    """Three participants vet the same three units: two say valid throughout, one invalid."""
    setup = panel_study(perturbations=3, quota=3, vetting_overlap=3)
    for pid, verdict in (("a", "valid"), ("b", "valid"), ("c", "invalid")):
        client = Client()
        arrive(client, setup.link, f"participant={pid}")
        assert len(vet_until_done(client, setup.study.pk, verdict)) == 3
    review = {f.participant.external_id: f for f in panel_figures(setup.study).participants}
    # The plurality of the others: a and b each meet one "valid" and one "invalid" (a tie,
    # theirs among it), c meets two "valid".
    assert review["a"].agreement == review["b"].agreement == (1.0, 3)
    assert review["c"].agreement == (0.0, 3)
