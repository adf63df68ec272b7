"""Endpoint reads that depend on who asks: a researcher uses their own endpoints, those shared
with them and the shipped ones (apps.accounts.permissions; an LLM judge's endpoint is changed
only through its judge)."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from apps.endpoints.models import Endpoint


def endpoints_for_user(user: Any) -> QuerySet[Endpoint]:
    """Endpoints this researcher may call (see EndpointQuerySet.for_user)."""
    return Endpoint.objects.for_user(user)
