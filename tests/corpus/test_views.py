"""Pages: login everywhere, the upload page, the dataset pages."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from apps.corpus.models import ImportJob, SourceItem
from tests.factories import DatasetFactory, SourceItemFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "url",
    [
        "/",
        "/datasets/",
        "/imports/new/",
        "/catalog/",
        "/catalog/criteria/import/",
        "/studies/1/",
        "/admin/",
    ],
)
def test_pages_need_a_login(client, url):
    response = client.get(url)
    assert response.status_code == 302 and "login" in response["Location"]


def test_healthz_is_open_and_reports_the_database(client):
    response = client.get("/healthz")
    assert response.status_code == 200 and response.json()["status"] == "ok"


def test_upload_page_imports_and_shows_the_result(client, researcher, catalog):
    client.force_login(researcher)
    upload = SimpleUploadedFile("items.csv", b"id,original\nx1,Some text.\nx2,More text.\n")
    response = client.post("/imports/new/", {"file": upload, "dataset": "uploaded"}, follow=True)
    assert response.status_code == 200
    assert b"2 items and" in response.content
    assert SourceItem.objects.filter(dataset__name="uploaded").count() == 2


def test_upload_page_shows_every_error(client, researcher, catalog):
    client.force_login(researcher)
    upload = SimpleUploadedFile("items.csv", b"id,original\nx1,\nx1,Again.\n")
    response = client.post("/imports/new/", {"file": upload, "dataset": "uploaded"}, follow=True)
    assert b"Nothing was imported" in response.content
    assert b"items.csv, row 2, field &#x27;original&#x27;: empty text" in response.content
    assert ImportJob.objects.get().status == "failed"
    assert SourceItem.objects.count() == 0


def test_annotator_is_refused_the_upload_page(client, annotator):
    client.force_login(annotator)
    assert client.get("/imports/new/").status_code == 403
    assert client.get("/catalog/criteria/import/").status_code == 403


def test_dataset_pages_list_items_and_export(client, researcher, django_assert_max_num_queries):
    dataset = DatasetFactory(owner=researcher)
    SourceItemFactory.create_batch(60, dataset=dataset)
    client.force_login(researcher)
    with django_assert_max_num_queries(8):
        assert b"Page 1 of 2" in client.get(f"/datasets/{dataset.pk}/").content
    with django_assert_max_num_queries(8):
        assert dataset.name.encode() in client.get("/datasets/").content
    body = b"".join(client.get(f"/datasets/{dataset.pk}/export.csv").streaming_content)
    assert body.count(b"\n") == 61


def test_another_researchers_dataset_is_not_found(client, researcher):
    dataset = DatasetFactory(owner=None)
    client.force_login(researcher)
    assert client.get(f"/datasets/{dataset.pk}/").status_code == 404
    assert client.get(f"/datasets/{dataset.pk}/export.jsonl").status_code == 404
