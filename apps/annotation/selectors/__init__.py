"""Reads for pages and the API, always through the user's role in the study."""

from apps.annotation.selectors.studies import (
    StudyOverview,
    study_for_role,
    study_for_user,
    study_overview,
    study_role,
)

__all__ = ["StudyOverview", "study_for_role", "study_for_user", "study_overview", "study_role"]
