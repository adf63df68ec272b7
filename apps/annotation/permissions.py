"""The study rules of the permission policy (apps.accounts.permissions): who may use a page
or an endpoint under ``/studies/<pk>/``, by their part in that study.

Compose them, in ``permission_classes`` or ``@allow(...)``::

    IsStudyOwner                       # the study's researcher: set-up, people, plan
    IsStudyOwner | IsStudyResearcher   # ... or a member with the researcher role
    IsStudyAnnotator                   # vetting, comparison
    IsStudyExpert                      # the survey
    (IsStudyOwner | IsStudyMember) & IsResearcher   # reports

Someone with no part in the study gets a 404 (as if it did not exist), a member whose role
does not fit a 403. The study is looked up once per request: the view takes it from
``study_access(request, pk)``.
"""

from __future__ import annotations

from typing import Any, cast

from django.http import Http404
from rest_framework.permissions import BasePermission, OperandHolder

from apps.accounts.models import Role
from apps.accounts.permissions import IsResearcher, is_participant
from apps.annotation.selectors.studies import StudyAccess, study_access_for_user

_CACHE = "_study_access"


def study_access(request: Any, pk: Any) -> StudyAccess:
    """The study ``pk`` and the user's part in it, looked up once per request (404 if the
    user has none)."""
    try:
        key = int(pk)
    except (TypeError, ValueError) as exc:
        raise Http404("No such study.") from exc
    found: dict[int, StudyAccess] = request.__dict__.setdefault(_CACHE, {})
    if key not in found:
        found[key] = study_access_for_user(request.user, key)
    return found[key]


class StudyPermission(BasePermission):
    """A rule about the user's part in the study the URL names (``view.kwargs[url_kwarg]``).
    A URL that names no study is refused."""

    url_kwarg = "pk"
    message = "Your role in this study does not allow this."

    def has_permission(self, request: Any, view: Any) -> bool:
        pk = view.kwargs.get(self.url_kwarg)
        if not request.user.is_authenticated or pk is None:
            return False
        return self.allows(study_access(request, pk))

    def allows(self, access: StudyAccess) -> bool:
        raise NotImplementedError


class IsStudyOwner(StudyPermission):
    """The study's researcher, who made it (superusers too)."""

    message = "Only the study's researcher may do this."

    def allows(self, access: StudyAccess) -> bool:
        return access.owner


class IsStudyMember(StudyPermission):
    """A member of the study with one of ``roles`` (any role if none are named)."""

    roles: tuple[str, ...] = ()

    def allows(self, access: StudyAccess) -> bool:
        role = access.member_role
        return role is not None and (not self.roles or role in self.roles)


class IsStudyAnnotator(IsStudyMember):
    roles = (Role.ANNOTATOR,)


class IsStudyExpert(IsStudyMember):
    roles = (Role.EXPERT,)


class IsStudyResearcher(IsStudyMember):
    """A member with the researcher role (not the owner: compose ``IsStudyOwner |``)."""

    roles = (Role.RESEARCHER,)


class IsStudyParticipant(IsStudyMember):
    """A participant recruited into the study (docs/annotation.md, "Recruiting a panel"): the
    pages of their start and completion, which nobody else uses."""

    admits_participants = True
    message = "Only the study's recruited participants use this page."

    def has_permission(self, request: Any, view: Any) -> bool:
        return is_participant(request.user) and super().has_permission(request, view)


class CreatesStudies(IsResearcher):
    message = "Only researchers create studies."


#: The study's researchers: its owner, or a member with the researcher role (progress,
#: settings, the plan, every answer of every type of work).
STUDY_RESEARCHERS = cast(OperandHolder, IsStudyOwner | IsStudyResearcher)
_DOES: dict[str, type[StudyPermission]] = {
    Role.ANNOTATOR: IsStudyAnnotator,
    Role.EXPERT: IsStudyExpert,
}


def does_work(role: str) -> type[StudyPermission]:
    """Who does a type of work: the members with its role (docs/annotation.md)."""
    return _DOES[role]
