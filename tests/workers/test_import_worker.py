"""Big uploads are imported by the real Celery worker, with progress in the database."""

import time

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from apps.corpus.diff import diff_payload
from apps.corpus.models import ImportJob, Perturbation, SourceItem
from workers.tasks.health import ping

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def _wait(job_id: int, timeout: float = 60) -> ImportJob:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = ImportJob.objects.get(pk=job_id)
        if job.finished:
            return job
        time.sleep(0.2)
    raise AssertionError(f"import job {job_id} did not finish: {job.status}")


def test_worker_answers(celery_worker):
    from workers.celery import app

    replies = app.control.ping(timeout=2)
    assert replies and all("ok" in next(iter(r.values())) for r in replies)
    ping.delay()  # a task that touches the database must not crash the worker
    time.sleep(0.5)
    assert celery_worker.poll() is None


def test_big_upload_is_imported_by_the_worker(celery_worker, client, researcher, catalog, settings):
    settings.DISCERN_BACKGROUND_IMPORT_BYTES = 1000
    rows = "".join(f'{{"id": "w{i}", "original": "Text number {i}."}}\n' for i in range(3000))
    client.force_login(researcher)
    response = client.post(
        "/imports/new/", {"file": SimpleUploadedFile("big.jsonl", rows.encode()), "dataset": "big"}
    )
    job_id = int(response["Location"].rstrip("/").split("/")[-1])
    assert ImportJob.objects.get(pk=job_id).status in ("pending", "running", "done")
    job = _wait(job_id)
    assert job.status == "done", job.errors
    assert (job.rows_done, job.rows_total) == (3000, 3000)
    assert SourceItem.objects.filter(dataset__name="big").count() == 3000
    page = client.get(f"/imports/{job_id}/", HTTP_HX_REQUEST="true")
    assert b"3000 items" in page.content and b"<html" not in page.content


def test_after_an_import_the_worker_stores_the_new_texts_diffs(
    celery_worker, client, researcher, catalog, settings
):
    settings.DISCERN_BACKGROUND_IMPORT_BYTES = 1000
    rows = "".join(
        f'{{"id": "d{i}", "original": "The council closed library {i}.", "perturbations": '
        f'[{{"kind": "negation", "text": "The council did not close library {i}."}}]}}\n'
        for i in range(200)
    )
    client.force_login(researcher)
    response = client.post(
        "/imports/new/", {"file": SimpleUploadedFile("pairs.jsonl", rows.encode()), "dataset": "d"}
    )
    job = _wait(int(response["Location"].rstrip("/").split("/")[-1]))
    assert job.status == "done", job.errors
    texts = Perturbation.objects.filter(item__dataset__name="d").select_related("item")
    deadline = time.monotonic() + 30
    while texts.filter(diff={}).exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert texts.count() == 200
    for text in texts:  # each its own diff, so no annotator's click computes one
        assert text.diff == diff_payload(text.item.original, text.text)
