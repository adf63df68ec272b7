"""Annotation API: the same services as the pages, for scripts and other front ends."""

from apps.annotation.api.studies import StudyViewSet
from apps.annotation.api.types import (
    AssessmentAPI,
    ComparisonAPI,
    GoldCheckAPI,
    PerturbationEditView,
    SurveyAPI,
    VettingAPI,
)

__all__ = [
    "AssessmentAPI",
    "ComparisonAPI",
    "GoldCheckAPI",
    "PerturbationEditView",
    "StudyViewSet",
    "SurveyAPI",
    "VettingAPI",
]
