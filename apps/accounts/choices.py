"""Choice lists of things researchers own (judges, endpoints): one made by someone else shows
its owner, "gpt judge — by alice", so two of the same name are never confused."""

from __future__ import annotations

from typing import Any


def owned_name(thing: Any, owner: Any, user: Any) -> str:
    """``thing``'s name, followed by "— by <owner>" when someone other than ``user`` owns it
    (one's own and the shipped ones, with no owner: the name alone)."""
    if owner is None or owner.pk == getattr(user, "pk", None):
        return str(thing)
    return f"{thing} — by {owner.username}"


def show_owners(field: Any, user: Any, owner_field: str) -> None:
    """Label each choice of a model choice ``field`` with its owner (``owned_name``), read
    from ``owner_field`` of the choices."""
    field.queryset = field.queryset.select_related(owner_field)
    field.label_from_instance = lambda thing: owned_name(thing, getattr(thing, owner_field), user)
