"""Accounts made by a researcher for the people of a study (see docs/annotation.md).

Each new account gets either a generated password or an invitation: a one-time link to set
a password (Django's password-reset token, which stops working once a password is set).
Both are shown once, to the researcher who made the accounts; neither is stored in clear.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass

from django.contrib.auth.tokens import default_token_generator
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import HttpRequest
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from apps.accounts.models import Role, User

PASSWORD_BYTES = 12


@dataclass(frozen=True)
class NewAccount:
    user: User
    password: str = ""
    invitation: tuple[str, str] | None = None  # (uidb64, token) of the invite-accept URL


def invitation(user: User) -> tuple[str, str]:
    """The arguments of the `invite-accept` URL: valid until a password is set."""
    return urlsafe_base64_encode(force_bytes(user.pk)), default_token_generator.make_token(user)


def usernames_check(usernames: Sequence[str]) -> list[str]:
    """Every reason these names cannot become new accounts (empty: all can)."""
    problems = []
    validate = UnicodeUsernameValidator()
    seen: set[str] = set()
    for name in usernames:
        try:
            validate(name)
        except ValidationError:
            problems.append(f"{name!r}: letters, digits and @ . + - _ only")
        if name in seen:
            problems.append(f"{name!r}: listed twice")
        seen.add(name)
    taken = User.objects.filter(username__in=usernames).values_list("username", flat=True)
    problems += [f"{name!r}: already has an account (add it by username)" for name in taken]
    return problems


@transaction.atomic
def accounts_create(*, usernames: Sequence[str], role: str, passwords: bool) -> list[NewAccount]:
    """Create every account or none. `passwords`: generate one each; else invitation links."""
    problems = usernames_check(usernames)
    if problems:
        raise ValidationError(problems)
    if role not in Role.values:
        raise ValidationError(f"unknown role {role!r}")
    made = []
    for name in usernames:
        user = User(username=name, role=role)
        if passwords:
            password = secrets.token_urlsafe(PASSWORD_BYTES)
            user.set_password(password)
            user.save()
            made.append(NewAccount(user=user, password=password))
        else:
            user.set_unusable_password()
            user.save()
            made.append(NewAccount(user=user, invitation=invitation(user)))
    return made


def invitation_url(request: HttpRequest, account: NewAccount) -> str:
    """The account's one-time invitation link, absolute (empty for a generated password)."""
    if account.invitation is None:
        return ""
    return request.build_absolute_uri(reverse("invite-accept", args=account.invitation))
