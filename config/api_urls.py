"""The REST API, version 1: every endpoint needs a token or a session.

Each app declares its endpoints in `apps/<app>/api_urls.py` (a `router` and/or
`urlpatterns`); this module collects them.
"""

from importlib import import_module
from importlib.util import find_spec

from django.urls import URLPattern, URLResolver, include, path

from apps.accounts.tokens import TokenView

APPS = ("catalog", "corpus", "annotation", "judging", "analysis")

urlpatterns: list[URLPattern | URLResolver] = [
    path("auth/token/", TokenView.as_view(), name="api-token")
]
for app in APPS:
    if find_spec(f"apps.{app}.api_urls") is not None:
        module = import_module(f"apps.{app}.api_urls")
        urlpatterns.append(path("", include(module.urlpatterns)))
