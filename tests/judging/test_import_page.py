"""The judge import page (docs/import.md): upload, see what maps to what and the prompt it
makes, then save; a bad file is a 400 naming the problem, never a 500; researchers only."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from apps.judging.models import Judge
from tests.judging.import_helpers import PROMPTFOO_EXAMPLE, counts

pytestmark = pytest.mark.django_db
URL = "/judging/judges/import/"


def upload(client, data: bytes, name: str = "promptfoo-rubric.yaml"):
    return client.post(URL, {"file": SimpleUploadedFile(name, data)})


def test_upload_preview_then_save(client, researcher, catalog):
    client.force_login(researcher)
    assert client.get("/judging/judges/").content.decode().count(URL) == 1
    page = client.get(URL)
    assert page.status_code == 200 and b'enctype="multipart/form-data"' in page.content
    before = counts()
    preview = upload(client, PROMPTFOO_EXAMPLE.read_bytes())
    html = preview.content.decode()
    assert preview.status_code == 200 and counts() == before  # nothing saved yet
    assert "Demo rubric: llm-rubric" in html and "tests[0].assert[0].threshold" in html
    assert "Discern compares scores, not pass/fail" in html
    assert "&lt;Rubric&gt;\nThe summary states only facts" in html  # the prompt, rendered
    document = preview.context["save"].initial["document"]
    saved = client.post(URL, {"document": document, "filename": "x.yaml", "save": "1"})
    assert saved.status_code == 302 and saved["Location"] == "/judging/judges/"
    judge = Judge.objects.get(created_by=researcher)
    assert judge.name == "Demo rubric: llm-rubric" and judge.endpoint.model == "demo-judge"
    assert "Demo rubric: llm-rubric" in client.get("/judging/judges/").content.decode()


@pytest.mark.parametrize(
    ("data", "shown"),
    [
        (b"tests: [unclosed", "not YAML or JSON"),
        (b"!!python/object/apply:os.system ['true']", "not YAML or JSON"),
        (b"\x00\xff" * 10, "not text (UTF-8)"),
        (b"tests:\n  - assert:\n      - type: similar\n        value: x\n", '"similar" is not'),
    ],
)
def test_a_bad_file_is_a_400_naming_the_problem(client, researcher, data, shown):
    client.force_login(researcher)
    before = counts()
    response = upload(client, data, "bad.yaml")
    assert response.status_code == 400 and counts() == before
    html = response.content.decode()
    assert "Not imported: nothing was created" in html and shown.replace('"', "&quot;") in html


def test_no_file_and_a_too_big_file_are_refused(client, researcher):
    client.force_login(researcher)
    assert client.post(URL, {}).status_code == 400
    big = upload(client, b"#" * (300 * 1024), "big.yaml")
    assert big.status_code == 400 and "larger than 256 KB" in big.content.decode()


def test_a_save_is_checked_again(client, researcher):
    """The text sent back is read anew: a tampered one is refused, nothing created."""
    client.force_login(researcher)
    tampered = PROMPTFOO_EXAMPLE.read_text().replace("llm-rubric", "similar")
    response = client.post(URL, {"document": tampered, "filename": "x.yaml", "save": "1"})
    assert response.status_code == 400 and not Judge.objects.exists()


@pytest.mark.parametrize("role", ["annotator", "expert"])
def test_only_researchers_import(client, django_user_model, role):
    user = django_user_model.objects.create_user(username=role, password="x", role=role)
    client.force_login(user)
    assert client.get(URL).status_code == 403
    assert upload(client, PROMPTFOO_EXAMPLE.read_bytes()).status_code == 403
    assert not Judge.objects.exists()


def test_anonymous_callers_are_sent_to_log_in(client):
    response = upload(client, PROMPTFOO_EXAMPLE.read_bytes())
    assert response.status_code == 302 and "login" in response["Location"]
    assert not Judge.objects.exists()
