"""Refuse a request body over `DISCERN_MAX_UPLOAD_BYTES` (files included) with 413.

Django's own `DATA_UPLOAD_MAX_MEMORY_SIZE` does not count uploaded files, so this middleware
checks the declared length before anything reads the body. Django reads no more than the
declared length, so a body cannot grow past it.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse


class UploadLimitMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit = settings.DISCERN_MAX_UPLOAD_BYTES
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if length > limit:
            return _too_large(request, length, limit)
        return self.get_response(request)


def _too_large(request: HttpRequest, length: int, limit: int) -> HttpResponse:
    message = (
        f"The upload is {length / 2**20:,.1f} MB; the largest this server accepts is "
        f"{limit / 2**20:,.1f} MB (DISCERN_MAX_UPLOAD_BYTES)."
    )
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": message}, status=413)
    return HttpResponse(message, status=413, content_type="text/plain; charset=utf-8")
