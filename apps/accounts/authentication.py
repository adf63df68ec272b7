"""API authentication: DRF's token scheme, its look-up written once as one plain statement.

The token and its user are read on every API request; DRF's own class builds the same join
with the ORM each time, which costs more CPU than the rest of a "next item" request
(docs/annotation.md, "Speed"). Here it is prepared once a connection (`apps.plain_sql`). Same
answers: an unknown token or an inactive user is refused.

Recruited participants use no API: neither scheme signs them in (a participant's page session
is anonymous here, their token, if one were ever made, refused), so every endpoint answers
them as it answers a visitor (apps.accounts.permissions, "participants").
"""

from __future__ import annotations

from functools import cache
from typing import Any

from django.db import DEFAULT_DB_ALIAS
from drf_spectacular.authentication import SessionScheme
from rest_framework import authentication, exceptions
from rest_framework.authtoken.models import Token

from apps.accounts.backends import user_columns, user_from_row
from apps.accounts.models import User
from apps.plain_sql import fetch

PARTICIPANTS_REFUSED = "Study participants do not use the API."


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
        if user.is_participant:
            raise exceptions.AuthenticationFailed(PARTICIPANTS_REFUSED)
        token = Token(key=key, user=user, created=row[0])
        token._state.adding, token._state.db = False, DEFAULT_DB_ALIAS
        return user, token


class SessionAuthentication(authentication.SessionAuthentication):
    """DRF's page-session scheme, for everyone but recruited participants: their session is
    for their work pages alone."""

    def authenticate(self, request: Any) -> tuple[User, None] | None:
        found = super().authenticate(request)
        if found is not None and found[0].is_participant:
            return None
        return found


class ParticipantlessSessionScheme(SessionScheme):
    """The API docs' cookie scheme for `SessionAuthentication` above (drf-spectacular knows
    DRF's own class only)."""

    target_class = "apps.accounts.authentication.SessionAuthentication"
