"""Fifty participants arriving through the link at once, each in a browser of their own
(a test client in a thread, each with its own database connection), on PostgreSQL: exact
quotas, no unit over its planned answers, nothing lost or doubled."""

from __future__ import annotations

from collections import Counter

import pytest
from django.test import Client

from apps.annotation.models import JudgementChange, Participant, Vetting, VettingSlot
from tests.annotation.panel_calls import arrive, vet_next, vet_until_done
from tests.annotation.test_concurrency import at_once
from tests.annotation.test_panel_quotas import panel_study

pytestmark = [pytest.mark.postgresql, pytest.mark.django_db(transaction=True)]
PARTICIPANTS, QUOTA, OVERLAP = 50, 3, 4


def test_fifty_participants_at_once_each_get_exactly_their_quota():
    setup = panel_study(perturbations=40, quota=QUOTA, vetting_overlap=OVERLAP)  # 160 slots
    study, link = setup.study, setup.link

    def participant(i: int) -> list[int]:
        client = Client()
        address = f"10.0.{i // 100}.{i % 100 + 1}"
        assert (
            arrive(client, link, f"PROLIFIC_PID=pid{i:04d}", REMOTE_ADDR=address).status_code == 302
        )
        done = vet_until_done(client, study.pk)
        assert b"C0DE" in client.get(f"/studies/{study.pk}/participant/?after=vetting").content
        return done

    answered = at_once(PARTICIPANTS, participant)
    assert [len(units) for units in answered] == [QUOTA] * PARTICIPANTS
    assert all(len(set(units)) == QUOTA for units in answered)  # never the same unit twice
    assert Participant.objects.filter(status="complete").count() == PARTICIPANTS
    vettings = Vetting.objects.filter(study=study)
    assert vettings.count() == PARTICIPANTS * QUOTA  # nothing lost
    assert (
        JudgementChange.objects.filter(study=study).count() == PARTICIPANTS * QUOTA
    )  # nor doubled
    per_unit = Counter(vettings.values_list("perturbation_id", flat=True))
    assert max(per_unit.values()) <= OVERLAP
    assert not VettingSlot.objects.filter(
        study=study, done_at__isnull=True, annotator__isnull=False
    )


def test_one_participant_in_many_tabs_at_once_never_passes_the_quota():
    setup = panel_study(perturbations=10, quota=2, vetting_overlap=1)
    study = setup.study
    tabs = [Client() for _ in range(8)]
    for tab in tabs:
        arrive(tab, setup.link, "participant=same-person")
    first = vet_next(tabs[0], study.pk)
    tabs[0].post(
        f"/studies/{study.pk}/vet/{first}/verdict/",
        {"idempotency_key": "4b0a7c1e-0000-4000-8000-000000000001", "verdict": "valid"},
    )
    handed = at_once(len(tabs), lambda i: vet_next(tabs[i], study.pk))
    assert len(set(handed)) == 1 and handed[0] is not None  # one more unit, the same in all
    person = Participant.objects.get().user
    assert VettingSlot.objects.filter(study=study, annotator=person).count() == 2
