"""Annotation API: the same services as the pages, for scripts and other front ends. Each type
of work's API is made in its page module (apps/annotation/views/<kind>.py, `work_api`)."""

from apps.annotation.api.studies import StudyViewSet

__all__ = ["StudyViewSet"]
