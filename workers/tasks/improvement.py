"""Improvement tasks: ids in, one service call (apps.analysis.improving.advance).

``advance_improvement`` looks at a running improvement's runs and moves it on; while it waits
for them it queues itself again. The sweep (workers.recovery) queues it again for one nobody
looked at for a minute.
"""

from __future__ import annotations

from celery import shared_task

from apps.analysis.improving.advance import (
    improvement_advance,
    improvement_fail,
    improvement_wait_s,
    improvements_quiet,
)
from workers.outages import through_outages


@shared_task(name="analysis.advance_improvement")
def advance_improvement(improvement_id: int) -> None:
    try:
        again = through_outages(improvement_advance, improvement_id=improvement_id)
    except Exception as exc:
        improvement_fail(improvement_id=improvement_id, error=f"{type(exc).__name__}: {exc}")
        raise
    if again:
        advance_improvement.apply_async(
            (improvement_id,), countdown=improvement_wait_s(improvement_id)
        )


@shared_task(name="analysis.recover_improvements")
def recover_improvements() -> list[int]:
    found = improvements_quiet()
    for improvement_id in found:
        advance_improvement.delay(improvement_id)
    return found
