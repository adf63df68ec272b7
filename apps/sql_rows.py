"""Model rows read by plain SQL on the hot paths of human work (docs/annotation.md, "Speed").

"Next item" and "submit" run on every click of every annotator; building their queries with
the ORM cost more CPU than the rest of the request (a statement's compilation is about a
millisecond). The statements there are written once per process, run prepared
(`apps.plain_sql`: `fetch`, `execute`) and their rows turned into model instances here
(`Columns`), with the same conversions the ORM does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from typing import Any, TypeVar

from django.db import DEFAULT_DB_ALIAS, connection, models

from apps.plain_sql import (
    FENCE,
    chained,
    execute,
    fetch,
    json_agg,
    json_array,
    json_nested,
    json_object_agg,
    json_value,
)

__all__ = [
    "FENCE",
    "Columns",
    "chained",
    "columns",
    "execute",
    "fetch",
    "insert",
    "insert_pair",
    "json_agg",
    "json_array",
    "json_nested",
    "json_object_agg",
    "json_value",
    "table",
]

M = TypeVar("M", bound=models.Model)


class Columns:
    """A model's concrete columns as selected under an alias, and their rows as instances."""

    def __init__(self, model: type[models.Model], alias: str) -> None:
        fields = model._meta.concrete_fields
        self.model = model
        self.sql = ", ".join(f'{alias}."{field.column}"' for field in fields)
        self.names = [field.attname for field in fields]
        self.width = len(fields)
        # What the ORM applies to a column it reads: the backend's conversions (SQLite gives
        # dates as text, booleans as integers), then the field's (`from_db_value`).
        self.converters: list[tuple[int, Any, list[Callable[..., Any]]]] = []
        for i, field in enumerate(fields):
            col = field.get_col(alias)
            found = connection.ops.get_db_converters(col) + field.get_db_converters(connection)
            if found:
                self.converters.append((i, col, found))

    def load(self, row: Sequence[Any], start: int = 0) -> Any:
        values = list(row[start : start + self.width])
        for i, col, converts in self.converters:
            for convert in converts:
                values[i] = convert(values[i], col, connection)
        return self.model.from_db(DEFAULT_DB_ALIAS, self.names, values)


@cache
def columns(model: type[models.Model], alias: str) -> Columns:
    return Columns(model, alias)


def table(model: type[models.Model]) -> str:
    return f'"{model._meta.db_table}"'


@cache
def _insert_sql(model: type[models.Model], conflict: bool) -> tuple[str, list[models.Field]]:
    fields = [field for field in model._meta.concrete_fields if not field.primary_key]
    names = ", ".join(f'"{field.column}"' for field in fields)
    marks = ", ".join(["%s"] * len(fields))
    tail = " ON CONFLICT DO NOTHING" if conflict else ""
    sql = f'INSERT INTO {table(model)} ({names}) VALUES ({marks}){tail} RETURNING "id"'
    return sql, fields


def insert(row: models.Model, *, unless_conflict: bool = False) -> bool:
    """Insert a new model instance in one statement, as `save()` would (its `auto_now`
    fields set), and give it its id. `unless_conflict`: a row that breaks a unique constraint
    is not inserted (False), instead of raising inside the transaction."""
    sql, fields = _insert_sql(type(row), unless_conflict)
    values = [field.get_db_prep_save(field.pre_save(row, True), connection) for field in fields]
    found = fetch(sql, values)
    if not found:
        return False
    row.pk = found[0][0]
    row._state.adding, row._state.db = False, DEFAULT_DB_ALIAS
    return True


@cache
def _pair_sql(model: type[models.Model], change: type[models.Model], link: str, extra: str) -> str:
    first, _ = _insert_sql(model, True)
    fields = [field for field in change._meta.concrete_fields if not field.primary_key]
    names = ", ".join(f'"{field.column}"' for field in fields)
    values = ", ".join(
        "new.id" if field.attname == link else f"CAST(%s AS {field.cast_db_type(connection)})"
        for field in fields
    )
    return (
        f"WITH new AS ({first}) INSERT INTO {table(change)} ({names}) "
        f'SELECT {values} FROM new RETURNING "id", "{link}"' + (f", {extra}" if extra else "")
    )


def insert_pair(
    row: models.Model,
    change: models.Model,
    link: str,
    extra: tuple[str, Sequence[Any]] | None = None,
) -> tuple[Any] | None:
    """Insert a new row (unless it breaks a unique constraint: then nothing, None) and
    `change`, a row whose `link` column points at it, in one statement; both get their ids.
    A unique constraint `change` breaks raises, and the row is not inserted either. `extra`:
    a scalar subquery (and its parameters) read by the same statement, its value returned
    as (value,) (it does not see the rows inserted; a JSON value decoded). One statement on
    PostgreSQL, three on SQLite."""
    if not chained():  # the same, one by one: `extra` first, so it does not see them either
        value = (json_value(fetch(f"SELECT {extra[0]}", extra[1])[0][0]),) if extra else (None,)
        if not insert(row, unless_conflict=True):
            return None
        setattr(change, link, row.pk)
        insert(change)
        return value
    _, fields = _insert_sql(type(row), True)
    values = [field.get_db_prep_save(field.pre_save(row, True), connection) for field in fields]
    for field in type(change)._meta.concrete_fields:
        if not field.primary_key and field.attname != link:
            values.append(field.get_db_prep_save(field.pre_save(change, True), connection))
    sql, params = extra or ("", ())
    found = fetch(_pair_sql(type(row), type(change), link, sql), [*values, *params])
    if not found:
        return None
    change.pk, row.pk = found[0][:2]
    setattr(change, link, row.pk)
    for saved in (row, change):
        saved._state.adding, saved._state.db = False, DEFAULT_DB_ALIAS
    return (json_value(found[0][2]) if extra else None,)
