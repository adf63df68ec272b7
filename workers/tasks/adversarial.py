"""Adversarial search tasks: ids in, one service call (apps.judging.services.searches).

``work_search`` works a search to its end; it is safe to run twice or at once on several
workers (one of them holds the search's claim, the others return). Database, Redis and
broker outages are waited out in the task (workers.outages); anything else fails the search
with the error shown on its page. A worker that starts restarts the searches its previous
incarnation held.
"""

from __future__ import annotations

from typing import Any

from celery import shared_task
from celery.signals import worker_ready

from apps.judging.services import (
    adversarial_search_fail,
    adversarial_search_work,
    adversarial_searches_recover,
)
from apps.judging.services.searches import STALE_AFTER_S
from workers.outages import TRANSIENT, through_outages


@shared_task(name="judging.work_search", bind=True, acks_late=True)
def work_search(self: Any, search_id: int) -> None:
    node = self.request.hostname or ""
    try:
        through_outages(adversarial_search_work, search_id=search_id, node=node)
    except TRANSIENT as exc:
        adversarial_search_fail(search_id=search_id, error=f"a service stayed out of reach: {exc}")
        raise
    except Exception as exc:
        adversarial_search_fail(search_id=search_id, error=f"{type(exc).__name__}: {exc}")
        raise


def queue_search_work(search_id: int) -> None:
    work_search.delay(search_id)


@shared_task(name="judging.recover_searches")
def recover_searches(node: str = "") -> list[int]:
    return adversarial_searches_recover(node=node)


@worker_ready.connect
def recover_after_start(sender: Any = None, **_: Any) -> None:
    node = getattr(sender, "hostname", "") or ""
    recover_searches.delay(node)  # this node's previous incarnation is dead: restart its own
    recover_searches.apply_async(countdown=STALE_AFTER_S + 1)  # other dead workers' searches
