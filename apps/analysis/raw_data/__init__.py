"""A study's raw data for notebooks: one row per human judgement or judge call, as CSV or
JSONL, with stable column names (see docs/api.md, "Raw data")."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from apps.analysis.kinds import kind_modules
from apps.analysis.raw_data import human, panel
from apps.annotation.models import Study
from apps.csv_cells import csv_lines
from apps.judging import exporting
from apps.judging.models import JudgeRun
from apps.judging.selectors import calls_for_export

Rows = Callable[[Study], Iterator[dict[str, Any]]]


def judge_call_rows(study: Study) -> Iterator[dict[str, Any]]:
    """Every call of every judge run on the study, runs in the order they were made."""
    runs = JudgeRun.objects.filter(study=study).select_related("judge", "strategy").order_by("id")
    for run in runs:
        for call in calls_for_export(run).iterator(chunk_size=human.CHUNK):
            yield exporting.call_row(run, call)


@dataclass(frozen=True)
class Table:
    title: str
    description: str
    columns: list[str]
    rows: Rows


#: The human judgements' tables, listed first.
_HUMAN = {
    "judgements": Table(
        "Human judgements",
        "Vettings, comparisons (with the order shown), expert votes and imported ratings.",
        human.JUDGEMENT_COLUMNS,
        human.judgement_rows,
    ),
    "history": Table(
        "Judgement history",
        "Every save of a judgement, with what it was before and after.",
        human.HISTORY_COLUMNS,
        human.history_rows,
    ),
    "versions": Table(
        "Edited texts",
        "Every annotator's edit of a perturbed text, as a numbered version.",
        human.VERSION_COLUMNS,
        human.version_rows,
    ),
}
#: Each kind of work's tables (`table_register`), listed after the judgements'.
_KINDS: dict[str, Table] = {}
#: The panel's and the judges' tables, listed last.
_OTHERS = {
    "participants": Table(
        "Recruited participants",
        "Every participant of the study's panel: platform id, status, answers, control items "
        "right, active time in all and per item, decision.",
        panel.PARTICIPANT_COLUMNS,
        panel.participant_rows,
    ),
    "judge-calls": Table(
        "Judge calls",
        "Every call of every judge run: request, raw reply, parsed score or verdict.",
        exporting.COLUMNS,
        judge_call_rows,
    ),
}


def table_register(slug: str, table: Table) -> None:
    """Add a kind of work's table (from its analysis module, apps/analysis/kinds.py)."""
    _KINDS[slug] = table


def tables() -> dict[str, Table]:
    """Every table by its slug, in the order they are listed."""
    kind_modules("apps.analysis")
    return {**_HUMAN, **_KINDS, **_OTHERS}


FORMATS = {"csv": "text/csv", "jsonl": "application/x-ndjson"}


def raw_data_lines(study: Study, table: str, file_format: str) -> Iterator[str]:
    """The table's rows as CSV (formula-safe, see apps/corpus/safe_csv.py) or JSON lines."""
    spec = tables()[table]
    rows = spec.rows(study)
    if file_format == "csv":
        return csv_lines(spec.columns, rows)
    return (
        json.dumps({c: row.get(c) for c in spec.columns}, ensure_ascii=False) + "\n" for row in rows
    )
