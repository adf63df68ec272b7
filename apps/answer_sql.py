"""The statements of a save of human work, built from what a kind declares (docs/annotation.md,
"Speed").

A save's first step locks what saves of the unit queue on (`UnitLock`), checks the
idempotency key, marks the person's slot of the unit done, locks their earlier answer and
reads what the answer needs of the unit (`UnitRead`, or a selector's `Scalar`): one statement
on PostgreSQL (`first_step`), its parts one by one on SQLite. A new answer's insert may count
the unit's other answers with it (`counted`). A kind of work states these; the statements are
written here, once a process, from the models' metadata: a kind hands over no SQL.

Generic over the models it is given (imports Django and the SQL layer only).
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from django.db import models
from django.utils import timezone

from apps import sql_rows as rows

Unit = dict[str, Any]  # a unit's lookup: {"perturbation_id": 3, "criterion_id": 7}


class Repeated(Exception):
    """The save's first step found its idempotency key used already."""


@dataclass(frozen=True)
class SqlValue:
    """A unit field's value the request does not name, as an SQL expression and its
    parameters (see `Through`)."""

    sql: str
    params: tuple[Any, ...]


@dataclass(frozen=True)
class Through:
    """A unit field the request does not give: `column` of the `model` row whose id is the
    answer's `key` (the vote's task: the task of the metric voted for). The save finds the
    answer by it; the value itself comes back with what the save reads (`UnitRead`)."""

    field: str
    model: type[models.Model]
    column: str
    key: str

    def value(self, answer: Mapping[str, Any]) -> SqlValue:
        sql = f'(SELECT "{self.column}" FROM {rows.table(self.model)} WHERE id = %s)'
        return SqlValue(sql, (answer[self.key],))


class _Joined:
    """A model's table as `u`, joined through foreign keys as lookups ask for them
    (`criterion__scale_min`)."""

    def __init__(self, model: type[models.Model]) -> None:
        self.model = model
        self.joins: list[str] = []
        self.aliases: dict[str, str] = {}  # a path of foreign keys: its table's alias

    def column(self, lookup: str) -> str:
        model: Any = self.model
        alias, path = "u", ""
        *links, last = lookup.split("__")
        for name in links:
            field = model._meta.get_field(name)
            path += f"__{name}"
            if path not in self.aliases:
                self.aliases[path] = joined = f"j{len(self.aliases) + 1}"
                target = field.related_model
                self.joins.append(
                    f"JOIN {rows.table(target)} {joined} "
                    f'ON {joined}."{target._meta.pk.column}" = {alias}."{field.column}"'
                )
            model, alias = field.related_model, self.aliases[path]
        return f'{alias}."{model._meta.get_field(last).column}"'

    def tables(self) -> str:
        return " ".join([f"{rows.table(self.model)} u", *self.joins])


@dataclass(frozen=True)
class Latest:
    """Read with the lock: the id of the person's (`person`) latest row of `model` (by
    `order`) about the locked row's `on`, set on the locked row as `name` (vetting: the
    annotator's last edit of the text)."""

    model: type[models.Model]
    on: str
    person: str
    order: str
    name: str


@dataclass(frozen=True)
class UnitLock:
    """Saves of a unit queue on one row of `model`: the study's row whose `by` columns are
    the unit's fields of the same names, and which is what `where` asks (lookups through
    foreign keys, and their values); no such row: the save is refused (`refusal`)."""

    model: type[models.Model]
    by: tuple[str, ...]
    refusal: str
    where: tuple[tuple[str, Any], ...] = ()
    latest: Latest | None = None

    @functools.cached_property
    def sql(self) -> str:
        table = _Joined(self.model)
        conditions = ['u."study_id" = %s', *(f"{table.column(name)} = %s" for name in self.by)]
        conditions += [f"{table.column(lookup)} = %s" for lookup, _ in self.where]
        latest = ""
        if self.latest is not None:
            on, person, order = self.latest.on, self.latest.person, self.latest.order
            latest = (
                f', (SELECT l.id FROM {rows.table(self.latest.model)} l WHERE l."{on}" = '
                f'u."{on}" AND l."{person}" = %s ORDER BY l."{order}" DESC LIMIT 1)'
            )
        columns = rows.columns(self.model, "u").sql
        where = " AND ".join(conditions)
        return f"SELECT {columns}{latest} FROM {table.tables()} WHERE {where} FOR UPDATE OF u"

    def params(self, *, study: Any, person: Any, unit: Unit) -> list[Any]:
        mine = [person.pk] if self.latest is not None else []
        fixed = [value for _, value in self.where]
        return [*mine, study.pk, *(unit[name] for name in self.by), *fixed]

    def load(self, row: tuple[Any, ...] | None) -> Any | None:
        """The locked row as an instance (with `latest`), or None: there was none."""
        if row is None or row[0] is None:
            return None
        locked = rows.columns(self.model, "u").load(row)
        if self.latest is not None:
            setattr(locked, self.latest.name, row[-1])
        return locked


@dataclass(frozen=True)
class UnitRead:
    """What the answer needs of its unit, read by the save's first step as a JSON array:
    `fields` (lookups through foreign keys) of the `model` row whose `by` columns are the
    unit's fields given beside them."""

    model: type[models.Model]
    by: tuple[tuple[str, str], ...]
    fields: tuple[str, ...]

    @functools.cached_property
    def statement(self) -> tuple[str, tuple[str, ...]]:
        table = _Joined(self.model)
        values = rows.json_array(*(table.column(name) for name in self.fields))
        where = " AND ".join(f"{table.column(column)} = %s" for column, _ in self.by)
        return f"(SELECT {values} FROM {table.tables()} WHERE {where})", tuple(
            field for _, field in self.by
        )


@dataclass(frozen=True)
class Scalar:
    """What the answer needs of its unit as a selector writes it: a scalar subquery giving
    one JSON value (`sql()`), its parameters named in order ("study", "person", a unit field
    or an answer key)."""

    sql: Callable[[], str]
    params: tuple[str, ...]

    @property
    def statement(self) -> tuple[str, tuple[str, ...]]:
        return self.sql(), self.params


def read_of(
    read: UnitRead | Scalar, *, study: Any, person: Any, unit: Unit, answer: Mapping[str, Any]
) -> tuple[str, list[Any]]:
    """`read`'s statement and its parameters for this save."""
    sql, names = read.statement
    known = {"study": study.pk, "person": person.pk, **answer, **unit}
    return sql, [known[name] for name in names]


@functools.cache
def _counted_sql(model: type[models.Model], field: str, unit: tuple[str, ...]) -> str:
    column = model._meta.get_field(field).column  # type: ignore[union-attr]
    of_unit = "".join(f' AND "{name}" = %s' for name in unit)
    return (
        f"(SELECT COALESCE({rows.json_object_agg('c.value', 'c.n')}, '{{}}') FROM "
        f'(SELECT "{column}" AS value, count(*) AS n FROM {rows.table(model)} '
        f'WHERE "study_id" = %s{of_unit} AND "control_id" IS NULL GROUP BY "{column}") c)'
    )


def counted(
    model: type[models.Model], field: str, *, study: Any, unit: Unit
) -> tuple[str, list[Any]]:
    """The unit's answers (not a control item's) counted by `field`, as a JSON object: read
    with the insert of a new answer (rows.insert_pair), it does not count that one."""
    return _counted_sql(model, field, tuple(unit)), [study.pk, *unit.values()]


@functools.cache
def key_seen(changes: type[models.Model]) -> str:
    """Whether an idempotency key was used (a change recorded with it)."""
    return f"SELECT 1 FROM {rows.table(changes)} WHERE idempotency_key = %s"


@functools.cache
def _parts(
    model: type[models.Model],
    person_field: str,
    unit: tuple[tuple[str, str], ...],
    slots: type[models.Model] | None,
    after_lock: str = "",
) -> tuple[str, str]:
    """The statements of `first_step`: the slot marked done (RETURNING it; "" without
    `slots`) and the answer locked. `unit`: (column, its value's placeholder or SQL) pairs;
    `after_lock`: a condition both wait on (the unit's lock, when they run as one)."""
    person = f"{person_field}_id"
    of_unit = "".join(f' AND "{name}" = {value}' for name, value in unit)
    closed = ""
    if slots is not None:
        returned = rows.columns(slots, "x").sql.replace('x."', '"')
        closed = (
            f"UPDATE {rows.table(slots)} SET done_at = COALESCE(done_at, %s) "
            f'WHERE "study_id" = %s AND "annotator_id" = %s{of_unit}{after_lock} '
            f"RETURNING {returned}"
        )
    mine = (
        f"SELECT {rows.columns(model, 'j').sql} FROM {rows.table(model)} j "
        f'WHERE "study_id" = %s AND "{person}" = %s{of_unit}{after_lock} FOR UPDATE'
    )
    return closed, mine


@functools.cache
def _statement(
    model: type[models.Model],
    person_field: str,
    changes: type[models.Model],
    unit: tuple[tuple[str, str], ...],
    slots: type[models.Model] | None,
    read: str,
    lock: str = "",
) -> str:
    """`_parts`, the key's check, `read` and `lock` as one statement (PostgreSQL)."""
    # The row saves of the unit queue on is locked first: the slot's update and the answer's
    # lock wait for it (a condition on it alone, checked before they touch a row).
    locking, after_lock = "", ""
    if lock:
        locking, after_lock = f"unit_lock AS ({lock}), ", " AND EXISTS (SELECT 1 FROM unit_lock)"
    closing, mine = _parts(model, person_field, unit, slots, after_lock)
    closed, selected = "", "mine.*"
    if slots is not None:
        closed, selected = f"closed AS ({closing}), ", "mine.*, closed.*"
    return (
        f"WITH {locking}{closed}mine AS ({mine}) "
        f"SELECT EXISTS ({key_seen(changes)}), {selected}{', ' + read if read else ''}"
        f"{', unit_lock.*' if lock else ''} FROM (SELECT 1) one"
        + (" LEFT JOIN unit_lock ON true" if lock else "")
        + " LEFT JOIN mine ON true"
        + (" LEFT JOIN closed ON true" if slots is not None else "")
    )


@dataclass(frozen=True)
class Save:
    """Who saves what: the answer's `model` (a judgement: `person_field`, the unit), the
    history's `changes` (where the key is), the `slots` whose row of the person and unit the
    save marks done (None: none, or the kind does it itself)."""

    model: type[models.Model]
    person_field: str
    changes: type[models.Model]
    slots: type[models.Model] | None


def first_step(
    save: Save,
    *,
    study: Any,
    person: Any,
    unit: Unit,
    key: uuid.UUID,
    read: tuple[str, list[Any]] | None = None,
    lock: tuple[str, list[Any]] | None = None,
) -> tuple[Any | None, tuple[Any | None] | None, Any]:
    """The person's answer on the unit (a control item's too), locked for the save. With
    it: raises Repeated when `key` was used already; marks the person's slot of the unit
    done in `save.slots`: (the slot or None), else None; reads `read` (a scalar subquery and
    its parameters: its value, a JSON value decoded, else None). A unit field may be a
    `SqlValue` (the answer is found by that expression). `lock` (a `UnitLock`'s statement
    and parameters) is taken first: its row, or None (then nothing else is done, nor
    Repeated raised), is the value instead of `read`'s. PostgreSQL runs it all as one
    statement (`_statement`), SQLite its parts one by one."""
    names = tuple((name, getattr(value, "sql", "%s")) for name, value in unit.items())
    of_unit = [
        bound
        for value in unit.values()
        for bound in (value.params if isinstance(value, SqlValue) else (value,))
    ]
    mine: list[Any] = [study.pk, person.pk, *of_unit]
    closing = [timezone.now(), *mine] if save.slots is not None else []
    if not rows.chained():
        return _apart(save, names, mine, closing, key, read, lock)
    read_sql, read_params = read or ("", [])
    lock_sql, lock_params = lock or ("", [])
    sql = _statement(
        save.model, save.person_field, save.changes, names, save.slots, read_sql, lock_sql
    )
    found = rows.fetch(sql, [*lock_params, *closing, *mine, key, *read_params])[0]
    answers = rows.columns(save.model, "j")
    locked = None
    if lock is not None:
        width = len(found) - (1 + answers.width) - (1 if read else 0)
        if save.slots is not None:
            width -= rows.columns(save.slots, "x").width
        locked = found[-width:]
        if locked[0] is None:  # no such row: the caller refuses the save
            return None, None, None
        found = found[:-width]
    if found[0]:
        raise Repeated
    earlier = answers.load(found, 1) if found[1] is not None else None
    value = locked if lock is not None else (rows.json_value(found[-1]) if read else None)
    if save.slots is None:
        return earlier, None, value
    start = 1 + answers.width
    slot = rows.columns(save.slots, "x").load(found, start) if found[start] else None
    return earlier, (slot,), value


def _apart(
    save: Save,
    names: tuple[tuple[str, str], ...],
    mine_params: list[Any],
    close_params: list[Any],
    key: uuid.UUID,
    read: tuple[str, list[Any]] | None,
    lock: tuple[str, list[Any]] | None,
) -> tuple[Any | None, tuple[Any | None] | None, Any]:
    """`first_step`'s statements one by one, in its order (SQLite)."""
    value = None
    if lock is not None:
        found = rows.fetch(*lock)
        if not found:
            return None, None, None
        value = found[0]
    if rows.fetch(key_seen(save.changes), [key]):
        raise Repeated
    closing, mine = _parts(save.model, save.person_field, names, save.slots)
    closed = None
    if save.slots is not None:
        slots = rows.fetch(closing, close_params)
        closed = (rows.columns(save.slots, "x").load(slots[0]) if slots else None,)
    answers = rows.fetch(mine, mine_params)
    earlier = rows.columns(save.model, "j").load(answers[0]) if answers else None
    if read is not None and lock is None:
        value = rows.json_value(rows.fetch(f"SELECT {read[0]}", read[1])[0][0])
    return earlier, closed, value
