"""What a request gets when no view answered it: one mapping for the pages and the API.

An outage (the database, Redis or the task broker away: ``apps.outages``) is a 503 with
Retry-After, JSON under /api/ and a short page elsewhere, that asks for nothing the outage
took (no session, no database). Anything else is Django's 500. Expected refusals (403, 404)
are not errors: ``quiet_refusals`` keeps them to one log line.
"""

from __future__ import annotations

import logging
import sys

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template import loader
from django.views import defaults

from apps.outages import OUTAGES

RETRY_AFTER_S = 30


def server_error(request: HttpRequest) -> HttpResponse:
    """``handler500``: Django calls it while handling the exception."""
    if isinstance(sys.exc_info()[1], OUTAGES):
        return unavailable(request)
    return defaults.server_error(request)


def unavailable(request: HttpRequest) -> HttpResponse:
    response: HttpResponse
    if request.path.startswith("/api/") or request.path == "/healthz":
        response = JsonResponse({"status": "unavailable"}, status=503)
    else:
        response = HttpResponse(loader.render_to_string("503.html"), status=503)
    response["Retry-After"] = str(RETRY_AFTER_S)
    return response


class QuietRefusals(logging.Filter):
    """Django logs every 403 and 404 raised by a view with its traceback; an access scan then
    writes thousands. One line each is enough: they are answers, not faults."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "status_code", 500) in (403, 404) and record.exc_info:
            record.exc_info = None
            record.exc_text = None
        return True
