"""Endpoint reads that depend on who asks: researchers use their own endpoints, those shared
with them and the shipped ones; they change only their own (apps.accounts.permissions)."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from apps.accounts.permissions import owned_by
from apps.endpoints.models import Endpoint


def endpoints_for_user(user: Any) -> QuerySet[Endpoint]:
    """Endpoints this researcher may call (see EndpointQuerySet.for_user)."""
    return Endpoint.objects.for_user(user)


def endpoints_owned_by(user: Any) -> QuerySet[Endpoint]:
    """Endpoints this user may change: their own."""
    return owned_by(Endpoint.objects.all(), user, "owner")
