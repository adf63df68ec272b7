"""Hostile item files through the command, the upload page and the API: a named error each
time, no 500, no traceback, no job left running, no upload left on disk, nothing written."""

import pytest
from django.conf import settings

from apps.corpus.models import ImportJob
from tests.hostile.cases import ITEM_CASES, ZIP_CASES, ZIP_LIMITS
from tests.hostile.conftest import (
    command_error,
    database_state,
    no_job_left_behind,
    page_text,
    upload,
)

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def zip_limits(settings):
    for name, value in ZIP_LIMITS.items():
        setattr(settings, name, value)
    settings.DISCERN_BACKGROUND_IMPORT_BYTES = 10_000_000  # here, every file is run at once


@pytest.mark.parametrize("case", ITEM_CASES, ids=str)
def test_command_names_the_problem(case, earlier, researcher, tmp_path):
    before = database_state()
    message = command_error(
        "import_items", case, tmp_path, "--dataset", "hostile", "--owner", researcher.username
    )
    assert case.message in message
    assert database_state() == before


@pytest.mark.parametrize("case", ITEM_CASES + ZIP_CASES, ids=str)
def test_upload_page_names_the_problem(case, earlier, client, researcher):
    before = database_state()
    client.force_login(researcher)
    response = client.post(
        "/imports/new/", {"file": upload(case), "dataset": "hostile"}, follow=True
    )
    text = page_text(response)
    assert case.message in text
    assert str(settings.MEDIA_ROOT) not in text
    assert database_state() == before
    assert ImportJob.objects.get().status == "failed"
    no_job_left_behind()


@pytest.mark.parametrize("case", ITEM_CASES + ZIP_CASES, ids=str)
def test_api_names_the_problem(case, earlier, api_client, researcher):
    before = database_state()
    api_client.force_authenticate(researcher)
    response = api_client.post(
        "/api/v1/imports/", {"file": upload(case), "dataset": "hostile"}, format="multipart"
    )
    assert response.status_code == 400, response.content
    errors = "\n".join(response.json()["errors"])
    assert case.message in errors
    assert str(settings.MEDIA_ROOT) not in errors
    assert database_state() == before
    no_job_left_behind()


def test_command_refuses_a_dataset_name_over_200_characters(earlier, researcher, tmp_path):
    before = database_state()
    case = ITEM_CASES[0].__class__("fine.csv", b"id,original\nx1,Fine.\n", "")
    message = command_error(
        "import_items", case, tmp_path, "--dataset", "d" * 201, "--owner", researcher.username
    )
    assert "fine.csv, field 'dataset': longer than 200 characters" in message
    assert database_state() == before
