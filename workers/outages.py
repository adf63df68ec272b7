"""Database, Redis and broker outages, waited out inside the task that meets them.

A task that meets one does not go back to the broker to be retried later (``Task.retry``
publishes a new message, which fails while the broker is away: Celery then drops the task's
message). It waits here, with backoff, and works on once the service answers again; after
``GIVE_UP_S`` it gives up with the error, and the caller fails its job with the reason.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

import tenacity
from django import db

from apps.outages import OUTAGES

logger = logging.getLogger(__name__)
T = TypeVar("T")

TRANSIENT = OUTAGES
GIVE_UP_S = 600.0  # an outage longer than this fails the job (it can be resumed)
MAX_WAIT_S = 30.0  # the longest wait between two tries


def _before_sleep(state: tenacity.RetryCallState) -> None:
    """A broken database connection is dropped, so the next try opens a new one."""
    db.connections.close_all()
    error = state.outcome.exception() if state.outcome else None
    logger.warning(
        "%s: %r; trying again in %.0f s",
        getattr(state.fn, "__name__", "a task"),
        error,
        state.next_action.sleep if state.next_action else 0.0,
    )


def through_outages(work: Callable[..., T], **kwargs: Any) -> T:
    """``work(**kwargs)``, tried again while it fails on an outage (``TRANSIENT``); the last
    error is raised after ``GIVE_UP_S``."""
    retrying = tenacity.Retrying(
        retry=tenacity.retry_if_exception_type(TRANSIENT),
        wait=tenacity.wait_exponential(multiplier=1, min=1, max=MAX_WAIT_S),
        stop=tenacity.stop_after_delay(GIVE_UP_S),
        before_sleep=_before_sleep,
        reraise=True,
    )
    return retrying(work, **kwargs)
