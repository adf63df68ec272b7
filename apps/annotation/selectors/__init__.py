"""Reads for pages and the API, always through the user's role in the study."""

from apps.annotation.selectors.studies import (
    StudyAccess,
    StudyOverview,
    studies_for_user,
    studies_listed,
    study_access_for_user,
    study_for_owner,
    study_for_role,
    study_for_user,
    study_members,
    study_overview,
    study_role,
)

__all__ = [
    "StudyAccess",
    "StudyOverview",
    "studies_for_user",
    "studies_listed",
    "study_access_for_user",
    "study_for_owner",
    "study_for_role",
    "study_for_user",
    "study_members",
    "study_overview",
    "study_role",
]
