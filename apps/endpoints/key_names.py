"""Which environment variables an endpoint may name as its API key (docs/judging.md, Keys).

Only names starting with ``DISCERN_KEY_``, plus those the operator lists in the setting
``DISCERN_KEY_VARIABLES``: an endpoint (a judge's, a generator's) can never make the worker send
its own secrets (``DJANGO_SECRET_KEY``, ``DATABASE_URL``...) to its address. Checked when an
endpoint is saved and again by the client, the one place a key is read.
"""

from __future__ import annotations

import re

KEY_PREFIX = "DISCERN_KEY_"
_PREFIXED = re.compile(rf"^{KEY_PREFIX}[A-Z0-9_]+$")
_RESERVED = frozenset({"DISCERN_KEY_VARIABLES"})


def listed_key_names() -> frozenset[str]:
    """Names the operator allowed in settings (none when Django is not configured)."""
    from django.conf import settings

    if not settings.configured:
        return frozenset()
    return frozenset(getattr(settings, "DISCERN_KEY_VARIABLES", ()) or ())


def key_name_problem(name: str) -> str | None:
    """Why an endpoint may not name this variable, or None when it may ("" is no key)."""
    if not name or name in listed_key_names():
        return None
    if _PREFIXED.match(name) and name not in _RESERVED:
        return None
    listed = sorted(listed_key_names())
    extra = f" or one of {', '.join(listed)}" if listed else ""
    return (
        f"a key variable's name must start with {KEY_PREFIX} (capitals, digits, _){extra}; "
        "other environment variables are never read"
    )
