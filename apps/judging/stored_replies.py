"""The cache of model calls: which stored reply may answer a new call with the same cache key
(same endpoint, model, parameters and messages), for judge calls and generator iterations
alike. The runner (``apps.endpoints.runner``) asks whatever this does not answer."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.db.models import Model

from apps.judging.models import ParseStatus

#: A reply, parsed or not, may be reused; an error never is (the next call asks itself).
REUSABLE = (ParseStatus.PARSED, ParseStatus.UNPARSED)


def stored_replies(
    model: type[Model], keys: Iterable[str], columns: Sequence[str]
) -> dict[str, dict[str, Any]]:
    """The first reply stored per cache key among ``model``'s rows that were asked over HTTP
    (not themselves reused) and got a reply: ``columns`` of it, ``cache_key`` included."""
    rows = (
        model._default_manager.filter(
            cache_key__in=list(keys), cached=False, parse_status__in=REUSABLE
        )
        .order_by("id")
        .values(*dict.fromkeys(("cache_key", *columns)))
    )
    found: dict[str, dict[str, Any]] = {}
    for row in rows:
        found.setdefault(row["cache_key"], row)
    return found
