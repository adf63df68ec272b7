"""Limits per client address, counted in the cache every web process shares (`shared`: Redis
when there is one; docs/annotation.md, "Recruiting a
panel": making participant identities)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.cache import caches
from rest_framework.throttling import ScopedRateThrottle


def client_address(request: Any) -> str:
    """The client's address: REMOTE_ADDR, or behind `PROXY_COUNT` proxies the one the
    outermost of ours added to X-Forwarded-For (the same rule as the API's throttles)."""
    proxies = settings.PROXY_COUNT
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    if proxies and forwarded:
        hops = [hop.strip() for hop in forwarded.split(",") if hop.strip()]
        if hops:
            return hops[-min(proxies, len(hops))]
    return str(request.META.get("REMOTE_ADDR", ""))


def over_limit(scope: str, address: str, *, limit: int, seconds: int) -> bool:
    """Count one more use of `scope` by `address` in a window of `seconds`; True once that
    makes more than `limit`."""
    key = f"rate:{scope}:{address}"
    cache = caches["shared"]
    cache.add(key, 0, seconds)
    try:
        used = cache.incr(key)
    except ValueError:  # the window ended between the two calls
        cache.set(key, 1, seconds)
        used = 1
    return used > limit


class SharedScopedRateThrottle(ScopedRateThrottle):
    """DRF's scoped throttle, counted in the `shared` cache: one count for every web process
    (DRF's own counts in each process's memory, so N processes would allow N times the rate)."""

    def __init__(self) -> None:
        super().__init__()
        self.cache = caches["shared"]
