"""An import job always ends, failed with its reason, whatever goes wrong inside it; its upload
is removed; and an upload over DISCERN_MAX_UPLOAD_BYTES is refused with 413."""

import time

import pytest

from apps.corpus import services
from apps.corpus.models import ImportJob
from tests.hostile.cases import ITEM_CASES, Case
from tests.hostile.conftest import database_state, no_job_left_behind, page_text, upload

GOOD = Case("good.csv", b"id,original\nx1,Some text.\n", "")


@pytest.fixture
def crashing_import(monkeypatch):
    def crash(**kwargs):
        raise RuntimeError("/srv/secret/path exploded")

    monkeypatch.setattr(services, "items_import", crash)


@pytest.mark.django_db
def test_an_unexpected_error_fails_the_job_on_the_page(crashing_import, client, researcher):
    client.force_login(researcher)
    response = client.post("/imports/new/", {"file": upload(GOOD), "dataset": "d"}, follow=True)
    text = page_text(response)
    job = ImportJob.objects.get()
    assert job.status == "failed"
    assert job.errors == ["good.csv: the import stopped on an unexpected error (RuntimeError)"]
    assert "unexpected error" in text and "/srv/secret" not in text
    no_job_left_behind()


@pytest.mark.django_db
def test_an_unexpected_error_fails_the_job_in_the_api(crashing_import, api_client, researcher):
    api_client.force_authenticate(researcher)
    response = api_client.post(
        "/api/v1/imports/", {"file": upload(GOOD), "dataset": "d"}, format="multipart"
    )
    assert response.status_code == 400
    assert response.json()["status"] == "failed" and "unexpected error" in str(response.json())
    no_job_left_behind()


@pytest.mark.django_db
def test_an_upload_over_the_limit_is_refused_with_413(client, researcher, settings):
    settings.DISCERN_MAX_UPLOAD_BYTES = 100_000
    client.force_login(researcher)
    big = Case("big.csv", b"id,original\n" + b"x1,aaaa\n" * 20_000, "")
    before = database_state()
    response = client.post("/imports/new/", {"file": upload(big), "dataset": "d"})
    assert response.status_code == 413
    assert "the largest this server accepts is 0.1 MB" in response.content.decode()
    api = client.post("/api/v1/imports/", {"file": upload(big), "dataset": "d"})
    assert api.status_code == 413 and "DISCERN_MAX_UPLOAD_BYTES" in api.json()["detail"]
    assert database_state() == before and not ImportJob.objects.exists()


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_the_worker_fails_a_hostile_file_with_its_reason(
    celery_worker, client, researcher, catalog, settings
):
    settings.DISCERN_BACKGROUND_IMPORT_BYTES = 10  # every upload goes to the worker
    case = next(c for c in ITEM_CASES if c.name == "surrogate.jsonl")
    before = database_state()
    client.force_login(researcher)
    client.post("/imports/new/", {"file": upload(case), "dataset": "hostile"})
    job = ImportJob.objects.get()
    deadline = time.monotonic() + 60
    while not job.finished and time.monotonic() < deadline:
        time.sleep(0.2)
        job.refresh_from_db()
    assert job.status == "failed"
    assert case.message in "\n".join(job.errors)
    assert database_state() == before
    no_job_left_behind()


@pytest.mark.django_db
def test_a_job_whose_worker_died_is_failed_when_its_task_comes_back(researcher, settings):
    """acks_late: a killed worker's task is delivered again; the job must not stay running."""
    folder = settings.MEDIA_ROOT / "imports" / "abandoned"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "big.csv").write_text("id,original\n")
    job = ImportJob.objects.create(
        dataset_name="d",
        path=str(folder / "big.csv"),
        original_name="big.csv",
        created_by=researcher,
        status=ImportJob.Status.RUNNING,
    )
    services.import_job_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == "failed" and "stopped before it finished" in job.errors[0]
    no_job_left_behind()
