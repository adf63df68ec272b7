"""Refuse, with 400, a request whose address, query or form fields hold a NUL character.

No text column stores one (PostgreSQL refuses it), and nobody types one: it only comes from
scanners and broken clients. Refused here, before any view looks it up, it cannot become a
database error. (Bytes that are not UTF-8 arrive as U+FFFD or stay percent-encoded: Django
decodes them so.)
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, JsonResponse, QueryDict

NUL = "\x00"


class OddInputMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if problem := _problem(request):
            if request.path.startswith("/api/"):
                return JsonResponse({"detail": problem}, status=400)
            return HttpResponse(problem, status=400, content_type="text/plain; charset=utf-8")
        return self.get_response(request)


def _problem(request: HttpRequest) -> str | None:
    if NUL in request.path:
        return "The address holds a NUL character."
    for where, fields in (("query", request.GET), ("form", _form(request))):
        for name, values in fields.lists():
            if NUL in name or any(NUL in value for value in values if isinstance(value, str)):
                return f"The {where} field {name.replace(NUL, '')!r} holds a NUL character."
    return None


FORMS = ("application/x-www-form-urlencoded", "multipart/form-data")


def _form(request: HttpRequest) -> QueryDict:
    """The form fields of a form-encoded or multipart POST; none for other bodies."""
    if request.method == "POST" and request.content_type in FORMS:
        return request.POST
    return QueryDict()
