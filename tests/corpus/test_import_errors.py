"""Broken inputs give an error naming file, row and field, and leave the database unchanged."""

import json

import pytest

from apps.corpus.importing import ImportFailed, items_import
from apps.corpus.models import Dataset, Perturbation, SourceItem

pytestmark = pytest.mark.django_db
HEADER = "id,source,original,task,kind,perturbed\n"


def _state():
    return Dataset.objects.count(), SourceItem.objects.count(), Perturbation.objects.count()


def _fails(path, fmt=None, **kwargs) -> str:
    before = _state()
    with pytest.raises(ImportFailed) as failure:
        items_import(path=path, dataset_name="broken", file_format=fmt, **kwargs)
    assert _state() == before, "a failed import must change nothing"
    return str(failure.value)


@pytest.fixture
def existing(catalog, tmp_path):
    """One good import first, so 'unchanged' means more than 'still empty'."""
    path = tmp_path / "good.jsonl"
    path.write_text(
        json.dumps(
            {
                "id": "a",
                "original": "Fine text.",
                "perturbations": [{"kind": "negation", "text": "Not fine text."}],
            }
        )
        + "\n"
    )
    items_import(path=path, dataset_name="broken")


def test_bad_encoding_names_the_line(existing, tmp_path):
    path = tmp_path / "latin1.csv"
    path.write_bytes((HEADER + "a,,Caf\xe9 text,,,\n").encode("latin-1"))
    message = _fails(path)
    assert "latin1.csv" in message and "not valid UTF-8 at line 2" in message


def test_missing_column(existing, tmp_path):
    path = tmp_path / "nocol.csv"
    path.write_text("id,source,text\nb,,Hello\n")
    assert "nocol.csv, row 1: missing column(s) original" in _fails(path)


def test_duplicate_ids(existing, tmp_path):
    path = tmp_path / "dup.csv"
    path.write_text(HEADER + "b,,First text.,,,\nc,,Other.,,,\nb,,Second text.,,,\n")
    assert "dup.csv, row 4, field 'id': duplicate id 'b' (first at row 2)" in _fails(path)


def test_duplicate_ids_in_jsonl(existing, tmp_path):
    path = tmp_path / "dup.jsonl"
    path.write_text('{"id": "b", "original": "x"}\n{"id": "b", "original": "y"}\n')
    assert "dup.jsonl, row 2, field 'id': duplicate id 'b'" in _fails(path)


def test_empty_text(existing, tmp_path):
    path = tmp_path / "empty.csv"
    path.write_text(HEADER + 'b,,Good.,,,\nc,,"   ",,,\nd,,Fine.,,negation,\n')
    message = _fails(path)
    assert "empty.csv, row 3, field 'original': empty text" in message
    assert "empty.csv, row 4, field 'perturbed': empty text" in message


def test_ten_megabyte_field(existing, tmp_path):
    path = tmp_path / "huge.csv"
    path.write_text(HEADER + "b,,Good.,,,\nc,," + "x" * 10_000_000 + ",,,\n")
    assert "huge.csv, row 3, field 'original': 10,000,000 characters, over the limit" in _fails(
        path
    )


@pytest.mark.parametrize(
    ("line", "where"),
    [
        ('{"id": "b", "original": "x",}', "row 2: not valid JSON"),
        ('["b", "x"]', "row 2: each line must be a JSON object"),
        ('{"id": "b", "original": ["x"]}', "row 2, field 'original': must be a string"),
        ('{"id": "b", "original": "x", "metadata": 3}', "row 2, field 'metadata': must be a JSON"),
        (
            '{"id": "b", "original": "x", "perturbations": [{"kind": "negation"}]}',
            "row 2, field 'perturbations[0]': needs string fields kind and text",
        ),
    ],
)
def test_wrong_json(existing, tmp_path, line, where):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "ok", "original": "Good."}\n' + line + "\n")
    assert f"bad.jsonl, {where}" in _fails(path)


def test_unknown_kind_and_task(existing, tmp_path):
    path = tmp_path / "names.csv"
    path.write_text(HEADER + "b,,Good.,poetry,,\nc,,Good.,,sarcasm,Bad.\n")
    message = _fails(path)
    assert "names.csv, row 2, field 'task': unknown task 'poetry'" in message
    assert "names.csv, row 3, field 'kind': unknown perturbation kind 'sarcasm'" in message


def test_changed_text_under_a_stored_id_is_refused(existing, tmp_path):
    path = tmp_path / "changed.jsonl"
    path.write_text('{"id": "a", "original": "A different text."}\n')
    assert "id 'a' is already stored with a different text" in _fails(path)


def test_every_problem_is_reported_not_just_the_first(existing, tmp_path):
    path = tmp_path / "many.csv"
    path.write_text(HEADER + "".join(f"r{i},,,,,\n" for i in range(70)))
    message = _fails(path)
    assert "row 2, field 'original'" in message and "and 20 more problems" in message


def test_fbi_folder_with_a_missing_column(catalog, tmp_path):
    (tmp_path / "factual").mkdir()
    (tmp_path / "factual" / "entity-errors.tsv").write_text("cdx\tquestion\tog\nx\tq\to\n")
    assert "factual/entity-errors.tsv, row 1: missing column(s) perturbed_gpt4" in _fails(
        tmp_path, "fbi"
    )
