"""Importing a criteria file shaped like Hu et al.'s aspect_criteria.json (methods §1)."""

import json
from collections import Counter

import pytest

from apps.catalog.criteria_import import criteria_import
from apps.catalog.models import Criterion
from apps.inputs.problems import ImportFailed
from tests.conftest import peer_path

pytestmark = pytest.mark.django_db


@pytest.fixture
def hu_file():
    return peer_path("hu2024", "aspect_criteria.json")


def test_hu2024_file_imports_80_criteria_over_11_aspects(catalog, hu_file):
    summary = criteria_import(path=hu_file, source="hu2024")
    imported = Criterion.objects.filter(source="hu2024")
    assert summary.created == 80 and imported.count() == 80
    assert imported.values("aspect").distinct().count() == 11
    types = Counter(imported.values_list("description_type", flat=True))
    # Gold → default, Selection1..3 → literature; the other labels keep their names.
    assert types == {
        "default": 11,
        "simplified": 11,
        "term": 11,
        "detailed": 11,
        "list": 11,
        "literature": 25,
    }
    gold = json.loads(hu_file.read_text())["Overall_quality"]["Gold"]
    assert Criterion.objects.get(key="hu2024-overall-gold").text == gold


def test_reimporting_adds_nothing(catalog, hu_file):
    criteria_import(path=hu_file, source="hu2024")
    again = criteria_import(path=hu_file, source="hu2024")
    assert (again.created, again.existing) == (0, 80)
    assert Criterion.objects.filter(source="hu2024").count() == 80


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"Fluency": {"Gold": "ok"', "not valid JSON"),
        ('{"Prettiness": {"Gold": "Looks nice."}}', "unknown aspect 'Prettiness'"),
        (
            '{"Fluency": {"Haiku": "Five seven five."}}',
            "field 'Fluency.Haiku': unknown description",
        ),
        ('{"Fluency": {"Gold": "Fine.", "Term": "  "}}', "field 'Fluency.Term': empty text"),
        ('["Fluency"]', "must be a JSON object"),
    ],
)
def test_a_bad_file_names_the_problem_and_imports_nothing(catalog, tmp_path, content, message):
    path = tmp_path / "criteria.json"
    path.write_text(content)
    before = Criterion.objects.count()
    with pytest.raises(ImportFailed) as failure:
        criteria_import(path=path, source="mine")
    assert message in str(failure.value) and "criteria.json" in str(failure.value)
    assert Criterion.objects.count() == before
