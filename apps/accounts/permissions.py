"""Role and ownership checks shared by pages and the API (see docs/api.md, "Access").

Every researcher's data (datasets, judges, strategies, runs, imports, generations) belongs to
them. Each app's selectors say who may READ (``*_for_user``: owner, plus what is shared);
``owned_by`` below is the one rule for who may CHANGE: the owner (superusers: all). Views
declare both through ``OwnerScoped``.
"""

from typing import Any, TypeVar

from django.db.models import Model, QuerySet
from rest_framework.permissions import SAFE_METHODS, BasePermission

M = TypeVar("M", bound=Model)


def is_researcher(user) -> bool:
    return bool(user.is_authenticated and user.is_researcher)


def owned_by(queryset: QuerySet[M], user: Any, field: str = "owner") -> QuerySet[M]:
    """The rows of ``queryset`` this user may change: their own; superusers all of them."""
    if not is_researcher(user):
        return queryset.none()
    if user.is_superuser:
        return queryset
    return queryset.filter(**{field: user})


class ResearcherWrites(BasePermission):
    """Everyone logged in may read; only researchers may create or change."""

    message = "Only researchers may do this."

    def has_permission(self, request, view) -> bool:
        if not (request.user and request.user.is_authenticated):
            return False
        return request.method in SAFE_METHODS or is_researcher(request.user)


class OwnerScoped:
    """ViewSet mixin: reads see ``readable(user)``, writes only ``writable(user)``.

    So another researcher's object is a 404 for a change, whatever its id; the view need not
    remember to check.
    """

    request: Any

    def readable(self, user: Any) -> QuerySet[Any]:
        raise NotImplementedError

    def writable(self, user: Any) -> QuerySet[Any]:
        raise NotImplementedError

    def get_queryset(self) -> QuerySet[Any]:
        user = self.request.user
        if self.request.method in SAFE_METHODS:
            return self.readable(user)
        return self.writable(user)
