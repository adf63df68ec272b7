"""Plain SQL for the hot paths: parameters sent apart from the statement, prepared on the
server once a connection (docs/annotation.md, "Speed").

Django's cursors bind parameters on the client (quoted into the statement) and PostgreSQL
parses and plans every statement it receives. On the paths that run on every click (the API's
token, the hand-out, the save) that cost more CPU than the work itself; here a statement is
prepared on first use and run with a generic plan after (config/settings.py,
``prepare_threshold`` and ``plan_cache_mode``). The cursors are wrapped as Django wraps its
own, so the statements are still counted and logged. The statements are written so that
SQLite runs them too, through Django's cursor (``fast()`` says which: the one place that
asks).

Below every app (imports Django only), so that any layer may use it.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Sequence
from datetime import datetime
from functools import cache
from typing import Any

from django.db import connection
from django.db.backends.utils import CursorDebugWrapper, CursorWrapper


def fast() -> bool:
    """Whether statements are prepared (PostgreSQL)."""
    return connection.vendor == "postgresql"


#: Ends a subquery that PostgreSQL must plan on its own, not merge into the outer query (an
#: optimisation fence); SQLite takes no OFFSET without a LIMIT and needs none.
FENCE = " OFFSET 0" if connection.vendor == "postgresql" else ""


def chained() -> bool:
    """Whether one statement may chain writes (`WITH ... UPDATE ... RETURNING`, read by the
    statement's other parts): PostgreSQL. SQLite runs the same parts one by one."""
    return fast()


def fetch(sql: str, params: Sequence[Any] | dict[str, Any]) -> list[tuple[Any, ...]]:
    """The rows of a statement that returns rows (SELECT, or RETURNING)."""
    with cursor() as opened:
        opened.execute(*_portable(sql, params))
        return opened.fetchall()


def execute(sql: str, params: Sequence[Any] | dict[str, Any]) -> None:
    with cursor() as opened:
        opened.execute(*_portable(sql, params))


def json_array(*values: str) -> str:
    """SQL building a JSON array of `values` (SQL expressions); `json_value` reads it."""
    return f"{'json_build_array' if fast() else 'json_array'}({', '.join(values)})"


def json_object_agg(key: str, value: str) -> str:
    """SQL aggregating `key`: `value` pairs into a JSON object; `json_value` reads it."""
    return f"{'json_object_agg' if fast() else 'json_group_object'}({key}, {value})"


def json_agg(value: str) -> str:
    """SQL aggregating `value` (a JSON value) into a JSON array, in no set order."""
    return f"{'json_agg' if fast() else 'json_group_array'}({value})"


def json_nested(value: str) -> str:
    """A JSON value read by a subquery or a CASE, placed inside another: SQLite would take
    it for a string (the value's JSON type does not cross a subquery), so it reads it again."""
    return value if fast() else f"json({value})"


def json_value(value: Any) -> Any:
    """A JSON value a statement returned: psycopg decodes it, SQLite gives its text."""
    return json.loads(value) if isinstance(value, str) else value


def _portable(
    sql: str, params: Sequence[Any] | dict[str, Any]
) -> tuple[str, Sequence[Any] | dict[str, Any]]:
    """The statement and parameters as this database takes them. SQLite has no row locks
    (its write transactions are serialised: `transaction_mode=IMMEDIATE` in settings), so a
    `FOR UPDATE` clause goes; psycopg takes datetimes and UUIDs as they are, SQLite stores
    them as text (UTC without an offset, hex digits), so they are turned into that text, as
    the ORM does, else a comparison with a stored value would not match."""
    if fast():
        return sql, params
    if isinstance(params, dict):
        return _unlocked(sql), {name: _value(value) for name, value in params.items()}
    return _unlocked(sql), [_value(value) for value in params]


@cache
def _unlocked(sql: str) -> str:
    return _FOR_UPDATE.sub("", sql)


_FOR_UPDATE = re.compile(r"\s+FOR UPDATE(?: OF \w+)?(?: SKIP LOCKED)?")


def _value(value: Any) -> Any:
    if isinstance(value, datetime):
        return connection.ops.adapt_datetimefield_value(value)
    if isinstance(value, uuid.UUID):
        return value.hex
    return value


def cursor(*, prepare: bool = True) -> Any:
    """PostgreSQL: a cursor that sends parameters apart from the statement (in binary where
    it can) and, with ``prepare``, prepares each statement once a connection. Same connection
    as the ORM's, so the same transaction. Elsewhere: Django's cursor."""
    if not fast():
        return connection.cursor()
    connection.ensure_connection()
    connection.validate_thread_sharing()
    raw = _cursor_class(prepare)(connection.connection)
    if connection.queries_logged:
        return _Logged(raw, connection)
    return connection.make_cursor(raw)


@cache
def _cursor_class(prepare: bool) -> type[Any]:
    import psycopg

    if not prepare:
        return psycopg.Cursor

    class Prepared(psycopg.Cursor[Any]):
        def execute(self, query: Any, params: Any = None, **options: Any) -> Any:
            return super().execute(query, params, prepare=True)

    return Prepared


class _Logged(CursorDebugWrapper):
    """Logs the statement as written: a prepared statement's text is not on the cursor."""

    def execute(self, sql: Any, params: Any = None) -> Any:
        with self.debug_sql(sql, params):
            return CursorWrapper.execute(self, sql, params)
