"""A study's raw data: every human judgement and judge call as CSV and JSONL, read the way a
notebook reads them, with spreadsheet formulas neutralised."""

import csv
import io
import json
import uuid

import pytest
from django.urls import reverse

from apps.csv_cells import csv_lines, safe_cell
from tests.analysis.builders import compare, judge_run, score, study_with_items, vote
from tests.annotation.work_calls import vetting_next, vetting_submit
from tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def study(catalog):
    study, items, perturbations = study_with_items(2, ["negation"])
    ann = UserFactory(username="ann-raw")
    MembershipFactory(study=study, user=ann, role="annotator")
    study.vetting_overlap = 1
    study.save()
    from apps.annotation.services import study_plan_build

    study_plan_build(study=study)
    slot = vetting_next(study=study, annotator=ann)
    for verdict, note in (("invalid", '=HYPERLINK("x")'), ("valid", "-fixed")):
        vetting_submit(
            study=study,
            annotator=ann,
            perturbation_id=slot.perturbation_id,
            verdict=verdict,
            note=note,
            idempotency_key=uuid.uuid4(),
        )
    compare(study, perturbations["negation"][0], "discern-non-contradiction-default", ann, "worse")
    vote(study, "negation", "coherence", UserFactory(username="exp-raw", role="expert"))
    run = judge_run(study)
    score(run, items[0], perturbations["negation"][0], 42.0)
    return study


def _get(client, study, table, fmt):
    response = client.get(reverse("study-raw-data", args=[study.pk, table, fmt]))
    assert response.status_code == 200, response
    return b"".join(response.streaming_content).decode()


def test_judgements_come_one_row_each_in_csv_and_jsonl(client, study):
    client.force_login(study.owner)
    rows = list(csv.DictReader(io.StringIO(_get(client, study, "judgements", "csv"))))
    assert [r["judgement"] for r in rows] == ["vetting", "comparison", "expert-vote"]
    vetting, comparison, vote_row = rows
    assert vetting["annotator"] == "ann-raw" and vetting["verdict"] == "valid"
    assert vetting["saves"] == "2" and vetting["note"] == "'-fixed"
    assert comparison["original_first"] == "True" and comparison["outcome"] == "worse"
    assert comparison["criterion"] == "discern-non-contradiction-default"
    assert vote_row["metric"] == "coherence" and vote_row["annotator"] == "exp-raw"
    lines = _get(client, study, "judgements", "jsonl").splitlines()
    first = json.loads(lines[0])
    assert len(lines) == 3 and first["note"] == "-fixed" and first["original_first"] is None


def test_history_keeps_every_save_and_formulas_are_text(client, study):
    client.force_login(study.owner)
    rows = list(csv.DictReader(io.StringIO(_get(client, study, "history", "csv"))))
    assert len(rows) == 2
    assert rows[0]["before"] == "" and json.loads(rows[1]["before"])["verdict"] == "invalid"
    assert json.loads(rows[1]["after"])["verdict"] == "valid"


def test_judge_calls_of_every_run(client, study):
    client.force_login(study.owner)
    rows = list(csv.DictReader(io.StringIO(_get(client, study, "judge-calls", "csv"))))
    assert len(rows) == 1 and rows[0]["score"] == "42.0" and rows[0]["kind"] == "negation"
    assert json.loads(_get(client, study, "judge-calls", "jsonl"))["score"] == 42.0


def test_raw_data_through_the_api_with_a_token(api_client, study):
    from rest_framework.authtoken.models import Token

    token = Token.objects.create(user=study.owner)
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    response = api_client.get(f"/api/v1/studies/{study.pk}/data/judgements.jsonl")
    assert response.status_code == 200 and response["Content-Type"] == "application/x-ndjson"
    assert len(b"".join(response.streaming_content).splitlines()) == 3


def test_only_the_studys_researchers_download(client, study):
    ann = study.memberships.get().user
    client.force_login(ann)
    assert (
        client.get(reverse("study-raw-data", args=[study.pk, "judgements", "csv"])).status_code
        == 403
    )
    client.force_login(UserFactory(role="researcher"))
    assert (
        client.get(reverse("study-raw-data", args=[study.pk, "judgements", "csv"])).status_code
        == 404
    )
    client.force_login(study.owner)
    assert (
        client.get(reverse("study-raw-data", args=[study.pk, "nothing", "csv"])).status_code == 404
    )


@pytest.mark.parametrize("text", ["=1+1", "+A1", "-1+2", "@SUM(A1)", "\tx", "\rx"])
def test_cells_that_spreadsheets_would_run_start_with_a_quote(text):
    assert safe_cell(text) == "'" + text
    line = "".join(csv_lines(["a"], [{"a": text}])).splitlines()[1]
    assert line.strip('"').startswith("'")


def test_plain_values_are_left_alone():
    assert safe_cell(-1.5) == -1.5 and safe_cell("a=b") == "a=b" and safe_cell("-1") == "-1"
    lines = "".join(csv_lines(["a", "b"], [{"a": None, "b": {"k": [1]}}])).splitlines()
    assert lines[1] == ',"{""k"": [1]}"'
