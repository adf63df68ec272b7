"""Import tasks: ids in, one service call."""

from celery import shared_task

from apps.corpus.services import import_job_run


@shared_task(name="corpus.run_import_job", acks_late=True)
def run_import_job(job_id: int) -> None:
    import_job_run(job_id=job_id)
