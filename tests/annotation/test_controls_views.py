"""The control items page and API: only the study's researchers define them and see accuracy;
annotators see a control exactly as any unit, through the pages and the API."""

from __future__ import annotations

import io
import json
import uuid

import pytest
from rest_framework.authtoken.models import Token

from apps.annotation.models import ControlItem, ControlServe, Study
from tests.annotation.factories import study_setup
from tests.annotation.test_controls import gold
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def setup():
    setup = study_setup(perturbations=8, annotators=1, aspects=1, assess=True, control_every=2)
    setup.gold = gold(setup.study, 4)  # type: ignore[attr-defined]
    return setup


def page(study: Study, tail: str = "") -> str:
    return f"/studies/{study.pk}/controls/{tail}"


def api(study: Study, tail: str = "") -> str:
    return f"/api/v1/studies/{study.pk}/{tail}"


def as_user(client, user):
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def test_only_the_studys_researchers_open_the_controls_page(client, setup):
    study = setup.study
    client.force_login(study.owner)
    assert client.get(page(study)).status_code == 200
    client.force_login(setup.annotators[0])
    assert client.get(page(study)).status_code == 403
    client.force_login(UserFactory(role="researcher"))
    assert client.get(page(study)).status_code == 404


def test_the_researcher_adds_imports_sets_and_removes_controls(client, setup):
    study, golds = setup.study, setup.gold
    client.force_login(study.owner)
    added = client.post(
        page(study, "add/"),
        {"work": "vetting", "perturbation": golds[0].pk, "answer": "invalid"},
    )
    assert added.status_code == 302
    bad = client.post(page(study, "add/"), {"work": "vetting", "answer": "invalid"})
    assert bad.status_code == 400 and b"perturbation is required" in bad.content
    criterion = setup.criteria[0].key
    csv_file = io.BytesIO(
        (
            "work,perturbation,item,criterion,answer,tolerance\n"
            f"comparison,{golds[1].pk},,{criterion},better,\n"
            f"assessment,,{golds[2].item_id},{criterion},4,1\n"
        ).encode()
    )
    csv_file.name = "controls.csv"
    assert client.post(page(study, "import/"), {"file": csv_file}).status_code == 302
    jsonl = io.BytesIO(
        (
            json.dumps({"work": "vetting", "perturbation": golds[3].pk, "answer": "valid"})
            + "\n"
            + json.dumps({"work": "vetting", "perturbation": 999999, "answer": "valid"})
        ).encode()
    )
    jsonl.name = "controls.jsonl"
    refused = client.post(page(study, "import/"), {"file": jsonl})
    assert refused.status_code == 400 and b"row 2" in refused.content
    assert ControlItem.objects.filter(study=study).count() == 3  # the bad file added nothing
    listed = client.get(page(study)).content.decode()
    assert "4 ± 1" in listed and "better" in listed and "invalid" in listed
    saved = client.post(
        page(study, "settings/"),
        {"control_every": 5, "control_threshold": 70, "control_exclude": "on"},
    )
    assert saved.status_code == 302
    study.refresh_from_db()
    assert (study.control_every, study.control_threshold, study.control_exclude) == (5, 70, True)
    one = client.post(page(study, "settings/"), {"control_every": 1})
    assert one.status_code == 400
    study.refresh_from_db()
    assert study.control_every == 5
    control = ControlItem.objects.filter(study=study).first()
    assert client.post(page(study, f"{control.pk}/remove/")).status_code == 302
    assert ControlItem.objects.filter(study=study).count() == 2


def test_the_api_defines_controls_for_researchers_only(api_client, setup):
    study, golds = setup.study, setup.gold
    as_user(api_client, setup.annotators[0])
    assert api_client.get(api(study, "controls/")).status_code == 403
    api_client.credentials()
    as_user(api_client, study.owner)
    made = api_client.post(
        api(study, "controls/"),
        {"work": "vetting", "perturbation": golds[0].pk, "answer": "invalid"},
        format="json",
    )
    assert made.status_code == 201 and made.json()["answer"] == "invalid"
    again = api_client.post(
        api(study, "controls/"),
        {"work": "vetting", "perturbation": golds[0].pk, "answer": "valid"},
        format="json",
    )
    assert again.status_code == 400 and "already" in again.json()["detail"]
    upload = io.BytesIO(
        json.dumps(
            {
                "work": "assessment",
                "perturbation": golds[1].pk,
                "criterion": setup.criteria[0].key,
                "answer": 3,
            }
        ).encode()
    )
    upload.name = "c.jsonl"
    imported = api_client.post(api(study, "controls/import/"), {"file": upload}, format="multipart")
    assert imported.status_code == 201 and imported.json()[0]["perturbation"] == golds[1].pk
    listed = api_client.get(api(study, "controls/")).json()
    assert [c["work"] for c in listed] == ["assessment", "vetting"]
    gone = api_client.delete(api(study, f"controls/{made.json()['id']}/"))
    assert gone.status_code == 204
    assert api_client.delete(api(study, f"controls/{made.json()['id']}/")).status_code == 404
    progress = api_client.get(api(study, "progress/")).json()
    assert progress["controls"] == []


def test_through_the_api_a_control_looks_like_any_unit(api_client, setup):
    study, ann = setup.study, setup.annotators[0]
    for p in setup.gold:
        ControlItem.objects.create(study=study, work="vetting", perturbation=p, expected="valid")
    as_user(api_client, ann)
    items, answers = {}, {}
    while len(items) < 2:
        item = api_client.post(api(study, "vetting/next/")).json()
        control = ControlServe.objects.filter(
            annotator=ann, control__perturbation_id=item["perturbation"]
        ).exists()
        kind = "control" if control else "real"
        saved = api_client.post(
            api(study, "vettings/"),
            {
                "perturbation": item["perturbation"],
                "verdict": "valid",
                "idempotency_key": str(uuid.uuid4()),
            },
            format="json",
        )
        assert saved.status_code == 201
        items.setdefault(kind, item)
        answers.setdefault(kind, saved.json())
    assert _shape(items["real"]) == _shape(items["control"])
    assert _shape(answers["real"]) == _shape(answers["control"])
    assert items["control"]["leased_until"] is not None
    mine = api_client.get(api(study, "vettings/")).json()["results"]
    assert {a["perturbation"] for a in mine} >= {i["perturbation"] for i in items.values()}
    assert "control" not in json.dumps(mine)


def _shape(data):
    """Keys and value types, recursively."""
    if isinstance(data, dict):
        return {k: _shape(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_shape(v) for v in data[:1]]
    return type(data).__name__


def test_accuracy_shows_on_the_progress_page_for_researchers_only(client, setup):
    study, ann = setup.study, setup.annotators[0]
    study.control_threshold = 90
    study.save()
    control = ControlItem.objects.create(
        study=study, work="vetting", perturbation=setup.gold[0], expected="invalid"
    )
    ControlServe.objects.create(
        study=study, control=control, annotator=ann, work="vetting", position=0
    )
    client.force_login(ann)
    client.post(
        f"/studies/{study.pk}/vet/{setup.gold[0].pk}/verdict/",
        {"verdict": "valid", "note": "", "idempotency_key": str(uuid.uuid4())},
    )
    assert client.get(f"/studies/{study.pk}/progress/").status_code == 403
    client.force_login(study.owner)
    html = client.get(f"/studies/{study.pk}/progress/").content.decode()
    table = html.split('id="control-accuracy"')[1].split("</table>")[0]
    assert ann.username in table and "below threshold" in table
