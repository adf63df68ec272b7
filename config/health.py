"""`/healthz`: open to load balancers (no login), reports whether the database answers.

It says "ok" or "error" and nothing else: the reason goes to the log, never to the caller.
"""

import logging

from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_GET

from apps.accounts.permissions import AllowAny, allow

logger = logging.getLogger(__name__)


@allow(AllowAny)
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception:  # any database failure makes the instance unhealthy
        logger.exception("healthz: the database does not answer")
        return JsonResponse({"status": "error"}, status=503)
    return JsonResponse({"status": "ok"})
