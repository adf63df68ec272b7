"""Annotation tasks: ids in, one service call."""

from celery import shared_task

from apps.annotation.models import Study
from apps.annotation.services import study_plan_build


@shared_task(name="annotation.build_study_plan", acks_late=True)
def build_study_plan(study_id: int) -> None:
    """Build a large study's plan (safe to run twice: the build brings the plan up to date)."""
    study = Study.objects.filter(pk=study_id).first()
    if study is not None:
        study_plan_build(study=study)
