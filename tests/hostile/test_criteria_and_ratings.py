"""Hostile criteria and ratings files: a named error, no 500, nothing written."""

import pytest

from tests.factories import DatasetFactory, SourceItemFactory
from tests.hostile.cases import CRITERIA_CASES, LONG_SOURCE, LONG_SOURCE_MESSAGE, RATINGS_CASES
from tests.hostile.conftest import command_error, database_state, page_text, upload

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("case", CRITERIA_CASES, ids=str)
def test_criteria_command(case, earlier, tmp_path):
    before = database_state()
    assert case.message in command_error("import_criteria", case, tmp_path)
    assert database_state() == before


@pytest.mark.parametrize("case", CRITERIA_CASES, ids=str)
def test_criteria_page(case, earlier, client, researcher):
    before = database_state()
    client.force_login(researcher)
    response = client.post("/catalog/criteria/import/", {"file": upload(case)})
    assert case.message in page_text(response)
    assert database_state() == before


@pytest.mark.parametrize("case", CRITERIA_CASES, ids=str)
def test_criteria_api(case, earlier, api_client, researcher):
    before = database_state()
    api_client.force_authenticate(researcher)
    response = api_client.post(
        "/api/v1/criteria/import/", {"file": upload(case)}, format="multipart"
    )
    assert response.status_code == 400
    assert case.message in "\n".join(response.json()["errors"])
    assert database_state() == before


def test_criteria_source_over_100_characters(earlier, api_client, researcher, tmp_path):
    before = database_state()
    good = CRITERIA_CASES[0].__class__("good.json", b'{"Fluency": {"Gold": "Fine."}}', "")
    assert LONG_SOURCE_MESSAGE in command_error(
        "import_criteria", good, tmp_path, "--source", LONG_SOURCE
    )
    api_client.force_authenticate(researcher)
    response = api_client.post(
        "/api/v1/criteria/import/",
        {"file": upload(good), "source": LONG_SOURCE},
        format="multipart",
    )
    assert response.status_code == 400
    assert LONG_SOURCE_MESSAGE in response.json()["errors"][0]
    assert database_state() == before


@pytest.fixture
def rated(earlier):
    dataset = DatasetFactory(name="rated")
    SourceItemFactory(dataset=dataset, external_id="s1")
    return dataset


@pytest.mark.parametrize("case", RATINGS_CASES, ids=str)
def test_ratings_command(case, rated, tmp_path):
    before = database_state()
    assert case.message in command_error("import_ratings", case, tmp_path, "--dataset", "rated")
    assert database_state() == before


@pytest.mark.parametrize("case", RATINGS_CASES, ids=str)
def test_ratings_api(case, rated, api_client, researcher):
    rated.owner = researcher
    rated.save()
    before = database_state()
    api_client.force_authenticate(researcher)
    response = api_client.post(
        f"/api/v1/datasets/{rated.pk}/ratings/", {"file": upload(case)}, format="multipart"
    )
    assert response.status_code == 400, response.content
    assert case.message in "\n".join(response.json()["errors"])
    assert database_state() == before
