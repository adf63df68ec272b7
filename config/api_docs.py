"""The API's front door: `/api/v1/` lists every endpoint, `/api/v1/docs/` (Swagger UI) and
`/api/v1/redoc/` document them interactively, `/api/v1/schema/` is the OpenAPI schema.

Swagger UI and Redoc are served from this server (drf-spectacular-sidecar), never a CDN.
Everything here needs a login, like the rest of the API (see docs/api.md)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from django.urls import reverse
from drf_spectacular.generators import EndpointEnumerator
from drf_spectacular.renderers import OpenApiYamlRenderer
from drf_spectacular.utils import extend_schema
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.accounts.permissions import IsAuthenticated, allow

PREFIX = "/api/v1/"


class SchemaTextRenderer(OpenApiYamlRenderer):
    """The YAML schema as text/plain, so a browser shows it instead of downloading it."""

    media_type = "text/plain"
    format = "txt"
    charset = "utf-8"


class SchemaView(SpectacularAPIView):
    """The OpenAPI schema: YAML shown as text to a browser; `Accept: application/json`,
    `application/yaml` or `application/vnd.oai.openapi[+json]` for tools."""

    permission_classes = [IsAuthenticated]
    renderer_classes = [SchemaTextRenderer, *SpectacularAPIView.renderer_classes]


def api_endpoints() -> list[dict[str, Any]]:
    """Every endpoint under /api/v1/: its path (with {placeholders}) and HTTP methods."""
    methods: dict[str, list[str]] = defaultdict(list)
    for path, _, method, _ in EndpointEnumerator().get_api_endpoints():
        if path.startswith(PREFIX):
            methods[path].append(method)
    return [
        {"path": path, "methods": sorted(set(found))} for path, found in sorted(methods.items())
    ]


class ApiRootView(APIView):
    """The endpoints of the Discern API, with links to its documentation and schema."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses={200: dict})
    def get(self, request: Request) -> Response:
        def url(name: str) -> str:
            return request.build_absolute_uri(reverse(name))

        endpoints = [
            {**e, "url": request.build_absolute_uri(e["path"])} if "{" not in e["path"] else e
            for e in api_endpoints()
        ]
        return Response(
            {
                "docs": {
                    "swagger_ui": url("api-docs"),
                    "redoc": url("api-redoc"),
                    "schema": url("api-schema"),
                    "guide": "docs/api.md in the repository",
                },
                "authentication": "a session, or the header 'Authorization: Token <key>' with "
                f"a key from POST {reverse('api-token')} (username, password)",
                "endpoints": endpoints,
            }
        )


# Pages for a browser: someone not logged in is sent to the login page.
swagger_ui = allow(IsAuthenticated)(SpectacularSwaggerView.as_view(url_name="api-schema"))
redoc = allow(IsAuthenticated)(SpectacularRedocView.as_view(url_name="api-schema"))
