"""The corpus API: token auth, role scoping, imports and exports."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.authtoken.models import Token

from apps.corpus.models import SourceItem
from tests.factories import DatasetFactory, SourceItemFactory, UserFactory

pytestmark = pytest.mark.django_db
ITEMS = (
    '{"id": "a", "original": "Text one.", "perturbations": [{"kind": "negation", '
    '"text": "Not text one."}]}\n{"id": "b", "original": "Text two."}\n'
)


def _auth(client, user):
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


@pytest.mark.parametrize(
    "url",
    [
        "/api/v1/datasets/",
        "/api/v1/items/",
        "/api/v1/kinds/",
        "/api/v1/criteria/",
        "/api/v1/studies/",
        "/api/v1/imports/",
        "/api/v1/schema/",
    ],
)
def test_every_endpoint_needs_credentials(api_client, url):
    assert api_client.get(url).status_code == 401


def test_token_is_issued_for_a_password(api_client, researcher):
    response = api_client.post(
        "/api/v1/auth/token/", {"username": "rita", "password": "correct horse battery staple"}
    )
    assert response.status_code == 200 and len(response.json()["token"]) == 40


def test_researcher_imports_and_exports_through_the_api(api_client, researcher, catalog):
    _auth(api_client, researcher)
    upload = SimpleUploadedFile("items.jsonl", ITEMS.encode())
    response = api_client.post(
        "/api/v1/imports/", {"file": upload, "dataset": "api"}, format="multipart"
    )
    assert response.status_code == 201, response.content
    job = response.json()
    assert job["status"] == "done" and job["summary"]["items_created"] == 2
    dataset = api_client.get("/api/v1/datasets/").json()["results"][0]
    assert (dataset["name"], dataset["item_count"]) == ("api", 2)
    exported = b"".join(
        api_client.get(
            f"/api/v1/datasets/{dataset['id']}/export/", {"file_format": "jsonl"}
        ).streaming_content
    )
    rows = [json.loads(line) for line in exported.decode().splitlines()]
    assert [r["id"] for r in rows] == ["a", "b"] and rows[0]["perturbations"][0]["kind"] == (
        "negation"
    )
    csv_text = b"".join(
        api_client.get(
            f"/api/v1/datasets/{dataset['id']}/export/", {"file_format": "csv"}
        ).streaming_content
    ).decode()
    assert csv_text.startswith("id,source,original,task,metadata,kind,perturbed")


def test_a_failed_import_reports_errors_and_stores_nothing(api_client, researcher, catalog):
    _auth(api_client, researcher)
    upload = SimpleUploadedFile("bad.jsonl", b'{"id": "a", "original": ""}\n')
    response = api_client.post(
        "/api/v1/imports/", {"file": upload, "dataset": "api"}, format="multipart"
    )
    assert response.status_code == 400
    assert response.json()["errors"] == ["bad.jsonl, row 1, field 'original': empty text"]
    assert SourceItem.objects.count() == 0


def test_annotators_cannot_import_or_list_datasets(api_client, annotator, catalog):
    DatasetFactory(owner=None)
    _auth(api_client, annotator)
    upload = SimpleUploadedFile("items.jsonl", ITEMS.encode())
    assert (
        api_client.post(
            "/api/v1/imports/", {"file": upload, "dataset": "x"}, format="multipart"
        ).status_code
        == 403
    )
    assert api_client.get("/api/v1/datasets/").json()["results"] == []
    assert api_client.get("/api/v1/kinds/").status_code == 200  # the catalog is public to users


def test_a_researcher_cannot_reach_another_researchers_data(api_client, researcher):
    other = UserFactory(username="omar", role="researcher")
    item = SourceItemFactory(dataset=DatasetFactory(owner=other))
    _auth(api_client, researcher)
    assert api_client.get(f"/api/v1/datasets/{item.dataset_id}/").status_code == 404
    assert api_client.get(f"/api/v1/items/{item.pk}/").status_code == 404
    assert api_client.get(f"/api/v1/datasets/{item.dataset_id}/export/").status_code == 404


def test_kinds_api_gives_expected_impact(api_client, annotator, catalog):
    _auth(api_client, annotator)
    kind = api_client.get("/api/v1/kinds/negation/").json()
    assert kind["expected_impact"] == ["non-contradiction", "faithfulness", "adequacy", "overall"]
    assert kind["target_aspect"] == "non-contradiction"


def test_kinds_list_uses_a_fixed_number_of_queries(
    api_client, annotator, catalog, django_assert_max_num_queries
):
    _auth(api_client, annotator)
    with django_assert_max_num_queries(6):
        response = api_client.get("/api/v1/kinds/", {"limit": 100})
    assert response.json()["count"] == 66  # the shipped kinds, the two adversarial ones included


def test_criteria_import_endpoint(api_client, researcher, catalog):
    _auth(api_client, researcher)
    upload = SimpleUploadedFile("mine.json", b'{"Fluency": {"Gold": "Reads well, {T}."}}')
    response = api_client.post(
        "/api/v1/criteria/import/", {"file": upload, "source": "mine"}, format="multipart"
    )
    assert response.status_code == 201 and response.json() == {"created": 1, "existing": 0}
    bad = SimpleUploadedFile("bad.json", b'{"Nope": {"Gold": "x"}}')
    response = api_client.post("/api/v1/criteria/import/", {"file": bad}, format="multipart")
    assert response.status_code == 400 and "unknown aspect 'Nope'" in response.json()["errors"][0]


def test_openapi_schema_is_served(api_client, researcher):
    _auth(api_client, researcher)
    response = api_client.get("/api/v1/schema/")
    assert response.status_code == 200 and b"openapi" in response.content
    assert b"/api/v1/imports/" in response.content
