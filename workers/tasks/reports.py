"""Report tasks: ids in, one service call."""

from celery import shared_task

from apps.analysis.services import report_build


@shared_task(name="analysis.build_report", acks_late=True)
def build_report(snapshot_id: int) -> None:
    report_build(snapshot_id=snapshot_id)
