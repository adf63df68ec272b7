"""Endpoint reads that depend on who asks: a researcher uses their own endpoints, those shared
with them and the shipped ones (apps.accounts.permissions; an LLM judge's endpoint is changed
only through its judge)."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from apps.endpoints.models import Endpoint, KeyGrant


def endpoints_for_user(user: Any) -> QuerySet[Endpoint]:
    """Endpoints this researcher may call (see EndpointQuerySet.for_user)."""
    return Endpoint.objects.for_user(user)


def granted_key_variables(user: Any) -> list[str]:
    """The key variables an administrator granted this researcher (by name or group)."""
    return KeyGrant.objects.granted_variables(user)
