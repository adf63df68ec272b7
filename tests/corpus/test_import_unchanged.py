"""Any import path flags a perturbation equal to its original, and its summary names it."""

import json

import pytest

from apps.corpus.importing import items_import
from apps.corpus.models import Perturbation

pytestmark = pytest.mark.django_db


def test_csv_import_flags_and_names_an_unchanged_perturbation(catalog, tmp_path):
    path = tmp_path / "items.csv"
    path.write_text(
        "id,original,kind,perturbed,perturbation_id\n"
        "a,The cat sat.,negation,The cat did not sit.,a-neg\n"
        "b,The dog ran.,negation,The dog ran.,b-neg\n"
    )
    summary = items_import(path=path, dataset_name="D", task="summarization")
    assert summary.unchanged == ["items.csv row 3 (b-neg)"]
    assert not summary.publisher_validated
    flags = dict(Perturbation.objects.values_list("external_id", "flags"))
    assert flags == {"a-neg": [], "b-neg": ["unchanged"]}


def test_jsonl_import_flags_an_unchanged_perturbation(catalog, tmp_path):
    path = tmp_path / "items.jsonl"
    row = {"id": "a", "original": "Same.", "perturbations": [{"kind": "negation", "text": "Same."}]}
    path.write_text(json.dumps(row) + "\n")
    summary = items_import(path=path, dataset_name="D", task="summarization")
    assert summary.unchanged == ["items.jsonl row 1"]
    assert Perturbation.objects.get().flags == ["unchanged"]


def test_the_upload_page_names_the_unchanged_perturbation(client, researcher, catalog):
    from django.core.files.uploadedfile import SimpleUploadedFile

    client.force_login(researcher)
    upload = SimpleUploadedFile(
        "items.csv",
        b"id,original,kind,perturbed,perturbation_id\nb,The dog ran.,negation,The dog ran.,b-n\n",
    )
    response = client.post(
        "/imports/new/",
        {"file": upload, "dataset": "uploaded", "task": "summarization"},
        follow=True,
    )
    body = response.content.decode()
    assert "1 perturbations equal their original" in body and "items.csv row 2 (b-n)" in body
