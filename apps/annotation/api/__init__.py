"""Annotation API: the same services as the pages, for scripts and other front ends."""

from apps.annotation.api.studies import StudyViewSet
from apps.annotation.api.types import ComparisonAPI, PerturbationEditView, SurveyAPI, VettingAPI

__all__ = ["ComparisonAPI", "PerturbationEditView", "StudyViewSet", "SurveyAPI", "VettingAPI"]
