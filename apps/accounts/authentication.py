"""API authentication: DRF's token scheme, its look-up written once as one plain statement.

The token and its user are read on every API request; DRF's own class builds the same join
with the ORM each time, which costs more CPU than the rest of a "next item" request
(docs/annotation.md, "Speed"). Here it is prepared once a connection (`apps.plain_sql`). Same
answers: an unknown token or an inactive user is refused.
"""

from __future__ import annotations

from functools import cache

from django.db import DEFAULT_DB_ALIAS
from rest_framework import authentication, exceptions
from rest_framework.authtoken.models import Token

from apps.accounts.backends import user_columns, user_from_row
from apps.accounts.models import User
from apps.plain_sql import fetch


@cache
def _statement() -> str:
    columns, _ = user_columns("u")
    return (
        f'SELECT t."created", {columns} FROM "{Token._meta.db_table}" t '
        f'JOIN "{User._meta.db_table}" u ON u."id" = t."user_id" WHERE t."key" = %s'
    )


class TokenAuthentication(authentication.TokenAuthentication):
    """`Authorization: Token <key>`, as DRF's, in one statement written once."""

    def authenticate_credentials(self, key: str) -> tuple[User, Token]:
        found = fetch(_statement(), [key])
        if not found:
            raise exceptions.AuthenticationFailed("Invalid token.")
        row = found[0]
        user = user_from_row(row[1:])
        if not user.is_active:
            raise exceptions.AuthenticationFailed("User inactive or deleted.")
        token = Token(key=key, user=user, created=row[0])
        token._state.adding, token._state.db = False, DEFAULT_DB_ALIAS
        return user, token
