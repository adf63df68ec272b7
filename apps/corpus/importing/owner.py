"""Who owns a dataset imported on the command line: the researcher named with --owner, or the
owner the dataset already has, or the only researcher there is. Nobody else sees a dataset
without an owner, so an import that cannot name one stops before reading the file."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db.models import Q

from apps.accounts.models import Role
from apps.corpus.models import Dataset


class OwnerNeeded(ValueError):
    """The import cannot tell whose dataset it is; the message says what to pass."""


def import_owner_resolve(*, username: str | None, dataset_name: str):
    """The researcher who will own `dataset_name`; raises OwnerNeeded with the reason."""
    users = get_user_model().objects
    if username:
        user = users.filter(username=username).first()
        if user is None:
            raise OwnerNeeded(f"no user named '{username}' (create one in the admin first)")
        if not user.is_researcher:
            raise OwnerNeeded(f"'{username}' is not a researcher; only researchers own datasets")
        return user
    owners = set(
        Dataset.objects.filter(name=dataset_name, owner__isnull=False).values_list(
            "owner", flat=True
        )[:2]
    )
    if len(owners) == 1:
        return users.get(pk=owners.pop())
    if owners:  # names are unique per owner, not across them
        raise OwnerNeeded(
            f"several researchers have a dataset named '{dataset_name}': pass --owner USERNAME"
        )
    researchers = list(users.filter(Q(role=Role.RESEARCHER) | Q(is_superuser=True))[:2])
    if len(researchers) == 1:
        return researchers[0]
    found = "no researcher exists yet" if not researchers else "there are several researchers"
    raise OwnerNeeded(
        f"dataset '{dataset_name}' needs an owner and {found}: pass --owner USERNAME "
        "(a researcher; only the owner and the members of its studies see a dataset)"
    )
