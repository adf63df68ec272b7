"""What a comparison, a text to rate and an adversarial text to label show, read by plain SQL
written once, which both databases run (docs/annotation.md, "Speed"): the API's item with
the statement that hands the unit out, the page's (with the person's answer, whether they
hold the unit, their counts and the unit of their last answer) in one statement. Vetting's
are in selectors/work.py.

Each `*_parts` is a select list and the tables it reads (a comparison's follow a JOIN, on the
conditions given; the others' follow FROM), each `*_load` turns a row back into model
instances from a position in it, and says where the row goes on.
"""

from __future__ import annotations

from functools import cache
from typing import Any, TypeVar

from apps import sql_rows as rows
from apps.annotation.models import (
    Assessment,
    AssessmentSlot,
    AssessmentUnit,
    Comparison,
    ComparisonSlot,
    GoldCheck,
    GoldCheckSlot,
    Judgement,
    JudgementChange,
)
from apps.catalog.models import Aspect, Criterion, Task
from apps.corpus.models import Dataset, Perturbation, SourceItem

J = TypeVar("J", bound=Judgement)

#: The name of the evaluated texts of item `i` (see selectors/work.py, `text_name`).
TEXT_NAME = "COALESCE(t.text_name, dt.text_name, 'text')"
MINE = "study_id = %(study)s AND annotator_id = %(person)s"
#: A person's waiting comparisons are counted up to this many, and shown as "1000+" past it:
#: counting a queue of thousands on every click cost PostgreSQL more than the rest of a page
#: (docs/annotation.md, "Speed"). The researcher's progress page counts them all.
QUEUE_SHOWN_UP_TO = 1000


def waiting_sql(slots: str, mine: str) -> str:
    """The person's open slots in `slots`, counted up to `QUEUE_SHOWN_UP_TO` + 1."""
    return (
        f"SELECT count(*) FROM (SELECT 1 FROM {slots} WHERE {mine} AND done_at IS NULL "
        f"LIMIT {QUEUE_SHOWN_UP_TO + 1}) waiting"
    )


def _tasks() -> str:
    """The item's dataset and the tasks of the item (t) and of its dataset (dt)."""
    tasks = rows.table(Task)
    return (
        f"JOIN {rows.table(Dataset)} d ON d.id = i.dataset_id "
        f"LEFT JOIN {tasks} t ON t.id = i.task_id LEFT JOIN {tasks} dt ON dt.id = d.task_id"
    )


def _load(row: Any, at: int, *models: tuple[type, str]) -> tuple[list[Any], int]:
    loaded = []
    for model, alias in models:
        columns = rows.columns(model, alias)
        loaded.append(columns.load(row, at) if row[at] is not None else None)
        at += columns.width
    return loaded, at


def _version(link: str) -> str:
    """The version of the person's answer `j` (services: `judgement_version`), 0 for none."""
    return (
        f"COALESCE((SELECT max(ch.id) FROM {rows.table(JudgementChange)} ch "
        f"WHERE ch.{link}_id = j.id), 0)"
    )


def latest_sql(model: type[Judgement]) -> str:
    """The unit of the person's last answer of `model` (the page's "back" when they have not
    answered the unit shown), as its unit fields' ids joined by commas; NULL if none."""
    unit = " || ',' || ".join(f"CAST(h.{name}_id AS TEXT)" for name in model.unit_fields)
    return (
        f"(SELECT {unit} FROM {rows.table(model)} h "
        "WHERE h.study_id = %(study)s AND h.annotator_id = %(person)s "
        "ORDER BY h.created_at DESC, h.id DESC LIMIT 1)"
    )


def latest_answer(model: type[J], value: str | None) -> J | None:
    """The last answer of `latest_sql` (only its unit's fields), or None."""
    if not value:
        return None
    names = [f"{name}_id" for name in model.unit_fields]
    return model(**dict(zip(names, map(int, value.split(",")), strict=True)))


# --- comparison --------------------------------------------------------------------------------


def comparison_parts(perturbation_on: str, criterion_on: str) -> tuple[str, str]:
    p, i = rows.columns(Perturbation, "p"), rows.columns(SourceItem, "i")
    c, a = rows.columns(Criterion, "c"), rows.columns(Aspect, "a")
    select = f"{p.sql}, {i.sql}, {c.sql}, {a.sql}, {TEXT_NAME}"
    tables = (
        f"{rows.table(Perturbation)} p ON {perturbation_on} "
        f"JOIN {rows.table(SourceItem)} i ON i.id = p.item_id {_tasks()} "
        f"JOIN {rows.table(Criterion)} c ON {criterion_on} "
        f"JOIN {rows.table(Aspect)} a ON a.id = c.aspect_id"
    )
    return select, tables


def comparison_load(row: Any, at: int = 0) -> tuple[Perturbation, Criterion, str, int]:
    (perturbation, item, criterion, aspect), at = _load(
        row, at, (Perturbation, "p"), (SourceItem, "i"), (Criterion, "c"), (Aspect, "a")
    )
    perturbation.item, criterion.aspect = item, aspect
    return perturbation, criterion, row[at], at + 1


@cache
def comparison_next_sql() -> str:
    """The person's first open slot (skipped ones last) with what the API shows of it, and
    the order of the texts of their answer on it, if any."""
    select, tables = comparison_parts("p.id = s.perturbation_id", "c.id = s.criterion_id")
    answer = (
        f"(SELECT j.original_first FROM {rows.table(Comparison)} j WHERE j.study_id = s.study_id "
        "AND j.perturbation_id = s.perturbation_id AND j.criterion_id = s.criterion_id "
        "AND j.annotator_id = s.annotator_id)"
    )
    return (
        f"SELECT {rows.columns(ComparisonSlot, 's').sql}, {select}, {answer} "
        f"FROM {rows.table(ComparisonSlot)} s JOIN {tables} "
        "WHERE s.study_id = %(study)s AND s.annotator_id = %(person)s AND s.done_at IS NULL "
        "ORDER BY s.skipped, s.position, s.criterion_id LIMIT 1"
    )


@cache
def comparison_item_sql() -> str:
    """A pair x criterion with the person's answer, whether they hold its slot, their
    answers and open slots (the page's queue line), and their last answer's unit."""
    select, tables = comparison_parts("p.id = %(perturbation)s", "c.id = %(criterion)s")
    slots, answers = rows.table(ComparisonSlot), rows.table(Comparison)
    unit = "perturbation_id = p.id AND criterion_id = c.id"
    return (
        f"SELECT {select}, {rows.columns(Comparison, 'j').sql}, "
        f"EXISTS (SELECT 1 FROM {slots} WHERE {MINE} AND {unit} AND done_at IS NULL), "
        f"(SELECT count(*) FROM {answers} WHERE {MINE}), "
        f"({waiting_sql(slots, MINE)}), {latest_sql(Comparison)} "
        f"FROM (SELECT 1) one JOIN {tables} LEFT JOIN {answers} j ON j.study_id = %(study)s "
        "AND j.annotator_id = %(person)s AND j.perturbation_id = p.id AND j.criterion_id = c.id"
    )


# --- direct assessment -------------------------------------------------------------------------


def assessment_parts() -> tuple[str, str]:
    """A unit (u): its item, its perturbed text if any, its criterion and the criterion's
    aspect, the name of the texts."""
    u, i = rows.columns(AssessmentUnit, "u"), rows.columns(SourceItem, "i")
    p, c = rows.columns(Perturbation, "p"), rows.columns(Criterion, "c")
    a = rows.columns(Aspect, "a")
    select = f"{u.sql}, {i.sql}, {p.sql}, {c.sql}, {a.sql}, {TEXT_NAME}"
    tables = (
        f"{rows.table(AssessmentUnit)} u JOIN {rows.table(SourceItem)} i ON i.id = u.item_id "
        f"{_tasks()} LEFT JOIN {rows.table(Perturbation)} p ON p.id = u.perturbation_id "
        f"JOIN {rows.table(Criterion)} c ON c.id = u.criterion_id "
        f"JOIN {rows.table(Aspect)} a ON a.id = c.aspect_id"
    )
    return select, tables


def assessment_load(row: Any, at: int = 0) -> tuple[AssessmentUnit, str, int]:
    (unit, item, perturbation, criterion, aspect), at = _load(
        row,
        at,
        (AssessmentUnit, "u"),
        (SourceItem, "i"),
        (Perturbation, "p"),
        (Criterion, "c"),
        (Aspect, "a"),
    )
    criterion.aspect = aspect
    unit.item, unit.perturbation, unit.criterion = item, perturbation, criterion
    return unit, row[at], at + 1


def _assessment_page() -> tuple[str, str]:
    """What the page shows of a unit (u): `assessment_parts`, the person's rating (and its
    version), whether they hold its slot, how many texts they rated, and their last
    rating's unit; its tables follow FROM, with the condition on u still to add."""
    select, tables = assessment_parts()
    j, slots = rows.columns(Assessment, "j"), rows.table(AssessmentSlot)
    select = (
        f"{select}, {j.sql}, {_version('assessment')}, "
        f"EXISTS (SELECT 1 FROM {slots} WHERE {MINE} AND unit_id = u.id AND done_at IS NULL), "
        f"(SELECT count(*) FROM {rows.table(Assessment)} WHERE {MINE}), "
        f"{latest_sql(Assessment)}"
    )
    tables += (
        f" LEFT JOIN {rows.table(Assessment)} j ON j.study_id = %(study)s "
        "AND j.annotator_id = %(person)s AND j.unit_id = u.id"
    )
    return select, tables


@cache
def assessment_item_sql() -> str:
    """A unit with the person's rating (and its version), whether they hold its slot, how
    many texts they rated, and their last rating's unit."""
    select, tables = _assessment_page()
    return f"SELECT {select} FROM {tables} WHERE u.id = %(unit)s"


# --- gold validation ---------------------------------------------------------------------------


def gold_check_parts() -> tuple[str, str]:
    """An adversarial text (p): its item, the name of the texts, the task's name and
    description (the item's task, else its dataset's)."""
    p, i = rows.columns(Perturbation, "p"), rows.columns(SourceItem, "i")
    select = (
        f"{p.sql}, {i.sql}, {TEXT_NAME}, "
        "CASE WHEN t.id IS NOT NULL THEN t.name ELSE COALESCE(dt.name, '') END, "
        "CASE WHEN t.id IS NOT NULL THEN t.description ELSE COALESCE(dt.description, '') END"
    )
    tables = (
        f"{rows.table(Perturbation)} p JOIN {rows.table(SourceItem)} i ON i.id = p.item_id "
        f"{_tasks()}"
    )
    return select, tables


def gold_check_load(row: Any, at: int = 0) -> tuple[Perturbation, tuple[str, str, str], int]:
    """The text (its item attached), and (text name, task name, task description)."""
    (perturbation, item), at = _load(row, at, (Perturbation, "p"), (SourceItem, "i"))
    perturbation.item = item
    return perturbation, tuple(row[at : at + 3]), at + 3  # type: ignore[return-value]


@cache
def gold_check_item_sql() -> str:
    """An adversarial text with the person's label (and its version), whether they hold its
    slot, how many texts they labelled, and their last label's text."""
    select, tables = gold_check_parts()
    j, slots = rows.columns(GoldCheck, "j"), rows.table(GoldCheckSlot)
    return (
        f"SELECT {select}, {j.sql}, {_version('gold_check')}, "
        f"EXISTS (SELECT 1 FROM {slots} WHERE {MINE} AND perturbation_id = p.id "
        "AND done_at IS NULL), "
        f"(SELECT count(*) FROM {rows.table(GoldCheck)} WHERE {MINE}), "
        f"{latest_sql(GoldCheck)} "
        f"FROM {tables} LEFT JOIN {rows.table(GoldCheck)} j ON j.study_id = %(study)s "
        "AND j.annotator_id = %(person)s AND j.perturbation_id = p.id "
        "WHERE p.id = %(perturbation)s"
    )
