"""Import tasks: ids in, one service call."""

from celery import shared_task

from apps.corpus.diffs import diffs_store
from apps.corpus.services import import_job_run


@shared_task(name="corpus.run_import_job", acks_late=True)
def run_import_job(job_id: int) -> None:
    import_job_run(job_id=job_id)


@shared_task(name="corpus.store_diffs", acks_late=True)
def store_diffs(dataset_id: int) -> None:
    diffs_store(dataset_id=dataset_id)
