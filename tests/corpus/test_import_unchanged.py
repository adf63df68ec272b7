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
