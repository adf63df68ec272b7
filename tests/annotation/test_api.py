"""The annotation API: roles, next item, idempotent submits, lists, progress and weights."""

import uuid

import pytest
from rest_framework.authtoken.models import Token

from apps.annotation.models import Comparison, ExpertVote, Vetting
from apps.catalog.models import Metric
from tests.annotation.factories import study_setup
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def as_user(client, user):
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


@pytest.fixture
def setup():
    return study_setup(perturbations=3, annotators=2, experts=1, aspects=2)


def api(study, tail):
    return f"/api/v1/studies/{study.pk}/{tail}"


@pytest.mark.parametrize(
    ("method", "tail"),
    [
        ("post", "vetting/next/"),
        ("post", "vettings/"),
        ("get", "vettings/"),
        ("post", "comparisons/next/"),
        ("post", "expert-votes/"),
        ("get", "progress/"),
        ("post", "plan/"),
    ],
)
def test_everything_needs_credentials(api_client, setup, method, tail):
    assert getattr(api_client, method)(api(setup.study, tail)).status_code == 401


@pytest.mark.parametrize(
    ("who", "method", "tail", "status"),
    [
        ("expert", "post", "vetting/next/", 403),
        ("owner", "post", "vetting/next/", 403),
        ("outsider", "post", "vetting/next/", 404),
        ("annotator", "post", "expert-votes/", 403),
        ("annotator", "get", "progress/", 403),
        ("annotator", "get", "weights/", 403),
        ("annotator", "post", "plan/", 403),
        ("expert", "get", "vettings/", 403),
        ("outsider", "get", "vettings/", 404),
        ("owner", "get", "progress/", 200),
        ("owner", "get", "weights/", 200),
        ("owner", "post", "plan/", 200),
    ],
)
def test_roles_are_enforced(api_client, setup, who, method, tail, status):
    users = {
        "annotator": setup.annotators[0],
        "expert": setup.experts[0],
        "owner": setup.study.owner,
        "outsider": UserFactory(username="outsider", role="researcher"),
    }
    as_user(api_client, users[who])
    assert getattr(api_client, method)(api(setup.study, tail)).status_code == status


def test_vetting_through_the_api(api_client, setup):
    ann = setup.annotators[0]
    as_user(api_client, ann)
    item = api_client.post(api(setup.study, "vetting/next/")).json()
    assert item["text_name"] == "summary" and item["kind"]["name"] == "Kind 0"
    assert any(op["op"] == "insert" for op in item["diff"])
    again = api_client.post(api(setup.study, "vetting/next/")).json()
    assert again["perturbation"] == item["perturbation"]  # the held item, lease renewed
    body = {
        "perturbation": item["perturbation"],
        "verdict": "score-invariant",
        "idempotency_key": str(uuid.uuid4()),
    }
    first = api_client.post(api(setup.study, "vettings/"), body, format="json")
    repeat = api_client.post(api(setup.study, "vettings/"), body, format="json")
    assert (first.status_code, repeat.status_code) == (201, 200)
    assert first.json()["id"] == repeat.json()["id"] and Vetting.objects.count() == 1
    listed = api_client.get(api(setup.study, "vettings/")).json()
    assert listed["count"] == 1 and listed["results"][0]["verdict"] == "score-invariant"
    bad = api_client.post(api(setup.study, "vettings/"), {**body, "verdict": "x"}, format="json")
    assert bad.status_code == 400
    changed = api_client.post(api(setup.study, "vettings/"), {**body, "verdict": "valid"}, "json")
    assert changed.status_code == 409 and "different answer" in changed.json()[0]
    assert Vetting.objects.get().verdict == "score-invariant"  # the first answer is kept


def test_a_stale_version_is_a_conflict(api_client, setup):
    as_user(api_client, setup.annotators[0])
    item = api_client.post(api(setup.study, "vetting/next/")).json()

    def submit(verdict: str, based_on: int) -> object:
        body = {
            "perturbation": item["perturbation"],
            "verdict": verdict,
            "based_on": based_on,
            "idempotency_key": str(uuid.uuid4()),
        }
        return api_client.post(api(setup.study, "vettings/"), body, format="json")

    assert submit("valid", based_on=0).status_code == 201
    stale = submit("invalid", based_on=0)  # written before the first save was seen
    assert stale.status_code == 409 and "another tab" in stale.json()[0]
    assert Vetting.objects.get().verdict == "valid"


def test_refusals_and_reused_keys(api_client, setup):
    a, b = setup.annotators
    as_user(api_client, a)
    item = api_client.post(api(setup.study, "vetting/next/")).json()
    key = str(uuid.uuid4())
    body = {"perturbation": item["perturbation"], "verdict": "valid", "idempotency_key": key}
    assert api_client.post(api(setup.study, "vettings/"), body, format="json").status_code == 201
    as_user(api_client, b)
    mine = api_client.post(api(setup.study, "vetting/next/")).json()
    reused = {"perturbation": mine["perturbation"], "verdict": "valid", "idempotency_key": key}
    assert api_client.post(api(setup.study, "vettings/"), reused, format="json").status_code == 409
    for other in (p.pk for p in setup.perturbations if p.pk != mine["perturbation"]):
        # a's item, and the one nobody holds: neither was handed to b
        theirs = {"perturbation": other, "verdict": "valid", "idempotency_key": str(uuid.uuid4())}
        refused = api_client.post(api(setup.study, "vettings/"), theirs, format="json")
        assert refused.status_code == 403
    assert api_client.get(api(setup.study, "vettings/")).json()["count"] == 0  # only theirs


def test_skip_edit_and_no_work(api_client):
    setup = study_setup(perturbations=1, annotators=1)
    as_user(api_client, setup.annotators[0])
    item = api_client.post(api(setup.study, "vetting/next/")).json()
    edit = api_client.post(
        api(setup.study, f"perturbations/{item['perturbation']}/edit/"),
        {"text": "An edited text.", "note": "clearer"},
        format="json",
    )
    assert edit.status_code == 201 and edit.json()["number"] == 2
    skip = api_client.post(
        api(setup.study, "vetting/skip/"), {"perturbation": item["perturbation"]}, format="json"
    )
    assert skip.status_code == 204
    back = api_client.post(api(setup.study, "vetting/next/"))
    assert back.json()["perturbation"] == item["perturbation"]  # the only item comes back
    body = {"perturbation": item["perturbation"], "verdict": "valid"}
    api_client.post(
        api(setup.study, "vettings/"), {**body, "idempotency_key": str(uuid.uuid4())}, "json"
    )
    assert api_client.post(api(setup.study, "vetting/next/")).status_code == 204


def comparison_answer(item: dict, choice: str) -> dict:
    """An answer to the comparison handed out as `item` (a new idempotency key)."""
    return {
        "perturbation": item["perturbation"],
        "criterion": item["criterion"],
        "choice": choice,
        "original_first": item["original_first"],
        "idempotency_key": str(uuid.uuid4()),
    }


def test_comparisons_through_the_api(api_client):
    setup = study_setup(perturbations=2, annotators=1, aspects=2, comparisons_need_vetting=False)
    as_user(api_client, setup.annotators[0])
    item = api_client.post(api(setup.study, "comparisons/next/")).json()
    assert "summary" in item["criterion_text"] and item["first"] != item["second"]
    body = comparison_answer(item, "B")
    saved = api_client.post(api(setup.study, "comparisons/"), body, format="json")
    assert saved.status_code == 201
    assert saved.json()["outcome"] == ("better" if item["original_first"] else "worse")
    assert api_client.get(api(setup.study, "comparisons/")).json()["count"] == 1
    nxt = api_client.post(api(setup.study, "comparisons/next/")).json()
    skip = {"perturbation": nxt["perturbation"], "criterion": nxt["criterion"]}
    assert api_client.post(api(setup.study, "comparisons/skip/"), skip, "json").status_code == 204
    no_criterion = {"perturbation": nxt["perturbation"]}
    assert api_client.post(api(setup.study, "comparisons/skip/"), no_criterion).status_code == 400
    assert Comparison.objects.count() == 1


def test_votes_weights_progress_and_settings(api_client, setup):
    as_user(api_client, setup.experts[0])
    metric = Metric.objects.get(slug="consistency")
    body = {"kind": setup.kinds[0].pk, "metric": metric.pk, "idempotency_key": str(uuid.uuid4())}
    assert api_client.post(api(setup.study, "expert-votes/"), body, "json").status_code == 201
    assert api_client.get(api(setup.study, "expert-votes/")).json()["count"] == 1
    assert ExpertVote.objects.get().metric == metric
    as_user(api_client, setup.study.owner)
    weights = api_client.get(api(setup.study, "weights/")).json()
    assert weights[0]["weights"] == {"coherence": 0.0, "consistency": 1.0, "fluency": 0.0}
    progress = api_client.get(api(setup.study, "progress/")).json()
    assert progress["votes"] == 1 and progress["perturbations"] == 3
    assert {row["username"] for row in progress["annotators"]} == {
        a.username for a in setup.annotators
    }
    changed = api_client.patch(api(setup.study, "settings/"), {"vetting_overlap": 2}, format="json")
    assert changed.status_code == 200 and changed.json()["vetting_overlap"] == 2
    assert setup.study.vetting_slots.count() == 6
    bad = api_client.patch(api(setup.study, "settings/"), {"vetting_overlap": 0}, format="json")
    assert bad.status_code == 400


def test_schema_documents_the_annotation_endpoints(api_client, researcher):
    as_user(api_client, researcher)
    schema = api_client.get("/api/v1/schema/").content.decode()
    for path in ("vetting/next/", "vettings/", "comparisons/next/", "expert-votes/", "weights/"):
        assert f"/api/v1/studies/{{id}}/{path}" in schema
    # the answers' `next` flag and the answer it gives are documented
    assert "VettingSavedAndNext" in schema and "description: 'true: answer with" in schema


def test_submit_and_next_in_one_round_trip(api_client):
    setup = study_setup(perturbations=2, annotators=1)
    as_user(api_client, setup.annotators[0])
    first = api_client.post(api(setup.study, "vetting/next/")).json()["perturbation"]
    body = {"perturbation": first, "verdict": "valid", "idempotency_key": str(uuid.uuid4())}
    saved = api_client.post(api(setup.study, "vettings/?next=true"), body, format="json")
    assert saved.status_code == 201
    assert saved.json()["saved"]["perturbation"] == first
    following = saved.json()["next"]
    assert following["perturbation"] != first and following["diff"]  # a whole item
    # A retry saves nothing and shows the same next unit (held, its lease renewed).
    again = api_client.post(api(setup.study, "vettings/?next=1"), body, format="json")
    assert again.status_code == 200 and again.json()["saved"]["id"] == saved.json()["saved"]["id"]
    assert again.json()["next"]["perturbation"] == following["perturbation"]
    last = {**body, "perturbation": following["perturbation"], "idempotency_key": str(uuid.uuid4())}
    done = api_client.post(api(setup.study, "vettings/?next=true"), last, format="json")
    assert done.status_code == 201 and done.json()["next"] is None  # nothing left
    assert Vetting.objects.count() == 2
    # Without the flag, the answer is the saved vetting alone, as before.
    plain = api_client.post(api(setup.study, "vettings/?next=false"), last, format="json")
    assert plain.status_code == 200 and plain.json()["perturbation"] == following["perturbation"]


def test_submit_and_next_refused_saves_and_hands_out_nothing(api_client, setup):
    as_user(api_client, setup.annotators[0])
    item = api_client.post(api(setup.study, "vetting/next/")).json()
    body = {"perturbation": item["perturbation"], "verdict": "valid"}
    unclear = api_client.post(
        api(setup.study, "vettings/?next=perhaps"),
        {**body, "idempotency_key": str(uuid.uuid4())},
        format="json",
    )
    assert unclear.status_code == 400 and "'perhaps' is not true or false" in unclear.json()["next"]
    bad = api_client.post(
        api(setup.study, "vettings/?next=true"),
        {**body, "verdict": "x", "idempotency_key": str(uuid.uuid4())},
        format="json",
    )
    assert bad.status_code == 400 and "verdict" in bad.json()
    assert Vetting.objects.count() == 0
    # still the same unit held: nothing else was handed out
    held = api_client.post(api(setup.study, "vetting/next/")).json()
    assert held["perturbation"] == item["perturbation"]
    as_user(api_client, setup.experts[0])
    metric = Metric.objects.get(slug="consistency")
    vote = {"kind": setup.kinds[0].pk, "metric": metric.pk, "idempotency_key": str(uuid.uuid4())}
    survey = api_client.post(api(setup.study, "expert-votes/?next=true"), vote, "json")
    assert survey.status_code == 400 and "hands out no units" in survey.json()["next"]
    assert ExpertVote.objects.count() == 0


def test_comparisons_submit_and_next(api_client):
    setup = study_setup(perturbations=2, annotators=1, aspects=1, comparisons_need_vetting=False)
    as_user(api_client, setup.annotators[0])
    item = api_client.post(api(setup.study, "comparisons/next/")).json()
    body = comparison_answer(item, "C")
    saved = api_client.post(api(setup.study, "comparisons/?next=true"), body, format="json")
    assert saved.status_code == 201 and saved.json()["saved"]["outcome"] == "same"
    following = saved.json()["next"]
    assert following["perturbation"] != item["perturbation"] and following["criterion_text"]
