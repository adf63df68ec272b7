"""`/healthz`: open to load balancers (no login), reports whether the database and, when
there is one, Redis answer: 200 ``{"status": "ok"}``, else 503 ``{"status": "error"}``.

It says "ok" or "error" and nothing else: the reason goes to the log, never to the caller.
It opens no session, so it answers the same whether or not Redis holds the sessions.
"""

import functools
import logging

import redis
from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_GET

from apps.accounts.permissions import AllowAny, allow

logger = logging.getLogger(__name__)
TIMEOUT_S = 2.0


@allow(AllowAny)
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        if settings.REDIS_URL:
            _redis(settings.REDIS_URL).ping()
    except Exception as error:  # any failure of either makes the instance unhealthy
        logger.warning("healthz: %r", error)
        return JsonResponse({"status": "error"}, status=503)
    return JsonResponse({"status": "ok"})


@functools.cache
def _redis(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, socket_timeout=TIMEOUT_S, socket_connect_timeout=TIMEOUT_S)
