"""Role checks shared by pages and the API."""

from rest_framework.permissions import SAFE_METHODS, BasePermission


def is_researcher(user) -> bool:
    return bool(user.is_authenticated and user.is_researcher)


class ResearcherWrites(BasePermission):
    """Everyone logged in may read; only researchers may create or change."""

    message = "Only researchers may do this."

    def has_permission(self, request, view) -> bool:
        if not (request.user and request.user.is_authenticated):
            return False
        return request.method in SAFE_METHODS or is_researcher(request.user)
