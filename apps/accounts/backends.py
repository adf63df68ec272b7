"""Page authentication: Django's `ModelBackend`, its look-up of the signed-in user written once
as one plain statement.

Every page request reads the user of its session; the ORM builds that query again each time,
about a millisecond of CPU on the hot path of human work (docs/annotation.md, "Speed"). Same
answers as `ModelBackend`: an unknown or inactive user is nobody.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from django.contrib.auth.backends import ModelBackend
from django.core.exceptions import ValidationError
from django.db import DEFAULT_DB_ALIAS, connection

from apps.accounts.models import User


@cache
def user_columns(alias: str) -> tuple[str, list[str]]:
    """The user's columns as selected under ``alias``, and the attribute names they fill."""
    fields = User._meta.concrete_fields
    return (
        ", ".join(f'{alias}."{field.column}"' for field in fields),
        [field.attname for field in fields],
    )


@cache
def _get_statement() -> str:
    columns, _ = user_columns("u")
    return f'SELECT {columns} FROM "{User._meta.db_table}" u WHERE u."id" = %s'


def user_from_row(row: Any) -> User:
    _, names = user_columns("u")
    return User.from_db(DEFAULT_DB_ALIAS, names, list(row))


class UserBackend(ModelBackend):
    """`ModelBackend` with `get_user` in one statement written once."""

    def get_user(self, user_id: Any) -> User | None:
        try:
            pk = User._meta.pk.to_python(user_id)  # type: ignore[union-attr]
        except ValidationError:
            return None
        with connection.cursor() as cursor:
            cursor.execute(_get_statement(), [pk])
            row = cursor.fetchone()
        if row is None:
            return None
        user = user_from_row(row)
        return user if self.user_can_authenticate(user) else None
