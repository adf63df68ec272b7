"""Annotation API: the same services as the pages, for scripts and other front ends."""

from apps.annotation.api.studies import StudyViewSet
from apps.annotation.api.types import (
    AssessmentAPI,
    ComparisonAPI,
    PerturbationEditView,
    SurveyAPI,
    VettingAPI,
)

__all__ = [
    "AssessmentAPI",
    "ComparisonAPI",
    "PerturbationEditView",
    "StudyViewSet",
    "SurveyAPI",
    "VettingAPI",
]
