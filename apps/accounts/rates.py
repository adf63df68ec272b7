"""Limits per client address, counted in the cache every web process shares (`shared`: Redis
when there is one; docs/annotation.md, "Recruiting a
panel": making participant identities)."""

from __future__ import annotations

from typing import Any

from django.core.cache import caches
from rest_framework.throttling import BaseThrottle, ScopedRateThrottle


def client_address(request: Any) -> str:
    """The client's address, by the API throttles' own rule (`NUM_PROXIES`, set from
    `DISCERN_PROXY_COUNT`): REMOTE_ADDR, or behind N proxies the address N back in
    X-Forwarded-For."""
    return str(BaseThrottle().get_ident(request) or "")


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
