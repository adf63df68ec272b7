"""Time on task: each save carries the active seconds its page measured; a unit's time is the
sum of its saves'; the progress page and API show each annotator's total and median per unit
(with N and interval) and the study's; the raw data has every answer's and every save's."""

import csv
import io
import math
import uuid

import pytest
from django.urls import reverse
from rest_framework.authtoken.models import Token

from apps.analysis.stats.intervals import median_interval
from apps.analysis.time_on_task import duration, time_on_task
from apps.annotation.models import JudgementChange, Vetting
from tests.annotation.factories import study_setup


def as_user(client, user):
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def vet(client, study, verdict, seconds=None, perturbation=None):
    if perturbation is None:
        perturbation = client.post(f"/api/v1/studies/{study.pk}/vetting/next/").json()
        perturbation = perturbation["perturbation"]
    body = {"perturbation": perturbation, "verdict": verdict, "idempotency_key": str(uuid.uuid4())}
    if seconds is not None:
        body["active_seconds"] = seconds
    return client.post(f"/api/v1/studies/{study.pk}/vettings/", body, format="json"), perturbation


# --- the figures, as pure functions -------------------------------------------------------------


def test_median_interval_is_the_order_statistics_of_the_textbook():
    # n = 10: the 2nd and 9th values cover the median with 97.9%; n = 20: the 6th and 15th.
    ten = median_interval(range(1, 11))
    assert (ten.value, ten.ci_low, ten.ci_high, ten.n) == (5.5, 2, 9, 10)
    twenty = median_interval(range(1, 21))
    assert (twenty.ci_low, twenty.ci_high) == (6, 15)
    few = median_interval([3.0, 5.0, 7.0])  # too few values to reach 95%: no bounds
    assert few.value == 5 and math.isnan(few.ci_low) and few.n == 3
    assert median_interval([]).n == 0


def test_time_on_task_of_a_hand_case():
    figures = time_on_task({1: [10.0, 20.0, 30.0], 2: [60.0], 3: []})
    assert figures.people[1].total_seconds == 60 and figures.people[1].per_item.value == 20
    assert figures.people[2].per_item.n == 1 and 3 not in figures.people
    assert figures.per_item.value == 25 and figures.per_item.n == 4  # 10, 20, 30, 60
    assert figures.per_person.value == 60 and figures.per_person.n == 2  # 60 and 60
    assert [duration(s) for s in (2.54, 44.6, 185, 3720, math.nan)] == [
        "2.5 s",
        "45 s",
        "3 min 05 s",
        "1 h 02 min",
        "—",
    ]


# --- saves carry it ----------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_units_time_is_its_saves_and_shows_on_progress_and_raw_data(api_client, client):
    setup = study_setup(perturbations=3, annotators=2)
    study, (ann, other) = setup.study, setup.annotators
    as_user(api_client, ann)
    first, unit = vet(api_client, study, "valid", 12.5)
    assert first.status_code == 201
    changed, _ = vet(api_client, study, "invalid", 3.0, perturbation=unit)  # back to change it
    assert changed.status_code == 201
    assert vet(api_client, study, "valid", 20)[0].status_code == 201
    untimed, _ = vet(api_client, study, "valid")  # a script that does not send it
    assert untimed.status_code == 201
    assert sorted(
        JudgementChange.objects.filter(user=ann).values_list("active_seconds", flat=True),
        key=lambda s: -1 if s is None else s,
    ) == [None, 3.0, 12.5, 20.0]

    as_user(api_client, study.owner)
    progress = api_client.get(f"/api/v1/studies/{study.pk}/progress/").json()
    mine = next(a for a in progress["annotators"] if a["username"] == ann.username)
    # Two timed units, 12.5 + 3 and 20; the untimed one is left out, not counted as zero.
    assert mine["time_on_task"]["total_seconds"] == 35.5
    assert mine["time_on_task"]["items_timed"] == 2
    assert mine["time_on_task"]["median_item_seconds"] == 17.8  # the median of 15.5 and 20
    assert (
        next(a for a in progress["annotators"] if a["username"] == other.username)["time_on_task"]
        is None
    )
    assert progress["time_on_task"]["people_timed"] == 1

    client.force_login(study.owner)
    page = client.get(reverse("study-progress", args=[study.pk])).content.decode()
    table = page[page.index('id="annotators"') :]
    assert "36 s" in table, table[:3000]
    assert "Median active time per unit" in page and "N=2" in page

    raw = client.get(reverse("study-raw-data", args=[study.pk, "judgements", "csv"]))
    rows = list(csv.DictReader(io.StringIO(b"".join(raw.streaming_content).decode())))
    assert sorted(r["active_seconds"] for r in rows) == ["", "15.5", "20.0"]
    raw = client.get(reverse("study-raw-data", args=[study.pk, "history", "csv"]))
    saves = list(csv.DictReader(io.StringIO(b"".join(raw.streaming_content).decode())))
    assert sorted(r["active_seconds"] for r in saves) == ["", "12.5", "20.0", "3.0"]


@pytest.mark.django_db
@pytest.mark.parametrize("seconds", [-1, 86401, "soon"])
def test_a_wrong_time_is_refused_naming_the_field_and_saves_nothing(api_client, seconds):
    setup = study_setup(perturbations=1, annotators=1)
    as_user(api_client, setup.annotators[0])
    response, _ = vet(api_client, setup.study, "valid", seconds)
    assert response.status_code == 400 and "active_seconds" in response.json()
    assert not Vetting.objects.exists() and not JudgementChange.objects.exists()


@pytest.mark.django_db
def test_the_page_form_carries_it(client):
    setup = study_setup(perturbations=1, annotators=1)
    study, ann = setup.study, setup.annotators[0]
    client.force_login(ann)
    client.get(reverse("vet-next", args=[study.pk]))
    unit = study.plan_perturbations.get().perturbation_id
    response = client.post(
        reverse("vet-submit", args=[study.pk, unit]),
        {"verdict": "valid", "idempotency_key": uuid.uuid4(), "active_seconds": "7.5"},
    )
    assert response.status_code == 302
    assert JudgementChange.objects.get().active_seconds == 7.5
    refused = client.post(
        reverse("vet-submit", args=[study.pk, unit]),
        {"verdict": "invalid", "idempotency_key": uuid.uuid4(), "active_seconds": "-3"},
    )
    assert refused.status_code == 400 and "active_seconds" in refused.content.decode()
    assert Vetting.objects.get().verdict == "valid"
