"""Who may use what: one policy for pages and the API (see docs/api.md, "Access").

Every view declares who may use it, with the permission classes below (composable, as in DRF:
``IsResearcher & IsOwnerOrReadOnly``, ``IsStudyOwner | IsStudyAnnotator``):

- API views list them in ``permission_classes``;
- pages say ``@allow(...)`` with the same classes.

Which objects a user reaches is the business of one set of selectors, one pair per kind in
each app's ``selectors``: ``<things>_for_user(user)`` (what they may read: the owner's, plus
what is shared) and ``<things>_owned_by(user)`` (what they may change: the owner's, built on
``owned_by`` below; superusers all). An object outside them is a 404, exactly as one that does
not exist. The study rules (owner, member with a role) are in apps.annotation.permissions.

Recruited participants (``Role.PARTICIPANT``, docs/annotation.md, "Recruiting a panel") reach
only pages that declare ``OpenToParticipants`` (their own work in their one study) and public
ones: ``allow`` refuses them everywhere else, and the API does not sign them in
(apps.accounts.authentication).

``tests/test_policy.py`` fails if a routed view declares nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from types import SimpleNamespace, UnionType
from typing import Any, TypeVar

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.db.models import Model, QuerySet
from rest_framework.exceptions import NotFound
from rest_framework.permissions import (
    SAFE_METHODS,
    AllowAny,
    BasePermission,
    IsAuthenticated,
    OperandHolder,
    SingleOperandHolder,
)

__all__ = [
    "AllowAny",
    "IsAuthenticated",
    "IsOwnerOrReadOnly",
    "IsResearcher",
    "OpenToParticipants",
    "ReadOnly",
    "allow",
    "is_participant",
    "is_researcher",
    "owned_by",
]

M = TypeVar("M", bound=Model)
#: A permission class, or classes composed with ``&``, ``|``, ``~``. (mypy reads ``A | B``
#: between two classes as a type union, hence UnionType; in a ``permission_classes`` list, say
#: ``cast(OperandHolder, A | B)``.)
Permission = type[BasePermission] | OperandHolder | SingleOperandHolder | UnionType
View = TypeVar("View", bound=Callable[..., Any])


def is_researcher(user: Any) -> bool:
    return bool(user.is_authenticated and user.is_researcher)


def is_participant(user: Any) -> bool:
    """A recruited participant: an identity of one study, reaching only its own work."""
    return bool(user.is_authenticated and getattr(user, "is_participant", False))


def admits_participants(permissions: tuple[Permission, ...]) -> bool:
    """Whether a page declared with these permissions is open to participants: a public one,
    or one that says ``OpenToParticipants``."""
    return any(p is AllowAny or getattr(p, "admits_participants", False) for p in permissions)


#: What a participant is told on any page outside their work.
PARTICIPANT_REFUSED = "This page is not part of the study you are taking part in."


def owned_by(queryset: QuerySet[M], user: Any, field: str = "owner") -> QuerySet[M]:
    """The rows of ``queryset`` this user may change: their own; superusers all of them."""
    if not is_researcher(user):
        return queryset.none()
    if user.is_superuser:
        return queryset
    return queryset.filter(**{field: user})


# --- permission classes -----------------------------------------------------------------------


class IsResearcher(BasePermission):
    """Researchers (and superusers) only: judging, imports, generation, reports."""

    message = "Only researchers may do this."

    def has_permission(self, request: Any, view: Any) -> bool:
        return is_researcher(request.user)


class ReadOnly(BasePermission):
    """GET, HEAD and OPTIONS, for anyone logged in: ``ReadOnly | IsResearcher``."""

    def has_permission(self, request: Any, view: Any) -> bool:
        return bool(request.user.is_authenticated and request.method in SAFE_METHODS)


class IsOwnerOrReadOnly(BasePermission):
    """An object the view found (through its ``<things>_for_user`` selector) may be read; it
    may be changed only if it is among ``view.owned(user)`` (its ``<things>_owned_by``
    selector). Anything else is a 404, as if it did not exist: a shipped judge, a judge
    shared with you, the dataset of a study you belong to."""

    def has_object_permission(self, request: Any, view: Any, obj: Any) -> bool:
        if request.method in SAFE_METHODS:
            return True
        if view.owned(request.user).filter(pk=obj.pk).exists():
            return True
        raise NotFound()


class OpenToParticipants(BasePermission):
    """Declares a page that recruited participants may open: their own work and their
    completion page. It lets nobody in by itself (it passes everyone): compose it with the
    study rule that decides, ``allow(IsStudyAnnotator, OpenToParticipants)``. Pages that do
    not declare it refuse participants (``allow``)."""

    admits_participants = True

    def has_permission(self, request: Any, view: Any) -> bool:
        return True


# --- pages ------------------------------------------------------------------------------------


def allow(*permissions: Permission, message: str | None = None) -> Callable[[View], View]:
    """Declare who may open a page, with the API's permission classes (all must pass).

    Someone not logged in is sent to the login page; someone logged in but refused gets a 403
    saying why (``message``, else the refusing permission's); a rule about an object the user
    may not see raises 404. ``allow(AllowAny)`` also opens the page to visitors not logged in.
    A participant is refused (403) unless the page is public or declares
    ``OpenToParticipants``.
    """

    open_to_participants = admits_participants(permissions)

    def decorate(view: View) -> View:
        @wraps(view)
        def guarded(request: Any, *args: Any, **kwargs: Any) -> Any:
            declared: Any = SimpleNamespace(args=args, kwargs=kwargs, view=view)
            if not open_to_participants and is_participant(request.user):
                raise PermissionDenied(PARTICIPANT_REFUSED)
            for permission_class in permissions:
                permission = permission_class()  # type: ignore[operator]
                if permission.has_permission(request, declared):
                    continue
                if not request.user.is_authenticated:
                    return redirect_to_login(request.get_full_path())
                raise PermissionDenied(message or _message(permission))
            return view(request, *args, **kwargs)

        guarded.access_policy = permissions  # type: ignore[attr-defined]
        if AllowAny in permissions:
            guarded.login_required = False  # type: ignore[attr-defined]
        return guarded  # type: ignore[return-value]

    return decorate


def _message(permission: Any) -> str | None:
    """The refusal message of a permission, or of the first part of a composed one."""
    if found := getattr(permission, "message", None):
        return str(found)
    parts = (getattr(permission, name, None) for name in ("op1", "op2"))
    return next((m for part in parts if part is not None and (m := _message(part))), None)
