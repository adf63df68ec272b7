"""Start-up of a server process: import now what its first request would otherwise import.

Management commands import neither the URL conf's heavy dependencies nor the libraries in
``settings.DISCERN_PRELOAD`` (they are imported where used); a web worker calls ``preload()``
when it starts, so no request pays for them (docs/deployment.md, Start-up).
"""

from importlib import import_module

from django.conf import settings
from django.urls import get_resolver


def preload() -> None:
    """Import the URL conf (every view and the services behind it) and the slow libraries."""
    get_resolver().url_patterns  # noqa: B018 - the property imports the URL conf
    for module in settings.DISCERN_PRELOAD:
        import_module(module)
