"""Perturbation generation tasks: ids in, one service call."""

from celery import shared_task

from apps.corpus.generation.jobs import generation_job_run


@shared_task(name="corpus.run_generation_job", acks_late=True)
def run_generation_job(job_id: int) -> None:
    generation_job_run(job_id=job_id)
