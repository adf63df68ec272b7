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


def fetch(sql: str, params: Sequence[Any] | dict[str, Any]) -> list[tuple[Any, ...]]:
    """The rows of a statement that returns rows (SELECT, or RETURNING)."""
    with cursor() as opened:
        opened.execute(sql, _adapted(params))
        return opened.fetchall()


def execute(sql: str, params: Sequence[Any] | dict[str, Any]) -> None:
    with cursor() as opened:
        opened.execute(sql, _adapted(params))


def _adapted(params: Sequence[Any] | dict[str, Any]) -> Sequence[Any] | dict[str, Any]:
    """Parameters as the ORM would send them: psycopg takes datetimes and UUIDs as they
    are; SQLite stores them as text (UTC without an offset, hex digits), so they are turned
    into that text, else a comparison with a stored value would not match."""
    if fast():
        return params
    if isinstance(params, dict):
        return {name: _value(value) for name, value in params.items()}
    return [_value(value) for value in params]


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
