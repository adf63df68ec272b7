"""Choice lists of things researchers own (judges, endpoints): one made by someone else is
shown as "alice/gpt judge", the form that names it in the API and on the command line. Names
hold no "/" (and user names none either), so no two choices of one researcher read alike."""

from __future__ import annotations

from typing import Any


def owned_name(thing: Any, owner: Any, user: Any) -> str:
    """``thing``'s name, after "<owner>/" when someone other than ``user`` owns it (one's own
    and the shipped ones, with no owner: the name alone)."""
    if owner is None or owner.pk == getattr(user, "pk", None):
        return str(thing)
    return f"{owner.username}/{thing}"


def show_owners(field: Any, user: Any, owner_field: str) -> None:
    """Label each choice of a model choice ``field`` with its owner (``owned_name``), read
    from ``owner_field`` of the choices."""
    field.queryset = field.queryset.select_related(owner_field)
    field.label_from_instance = lambda thing: owned_name(thing, getattr(thing, owner_field), user)
