"""Work nobody works on is dispatched again: runs and searches whose tasks died, or whose
queued messages were lost (a broker that restarts empty loses every message it held).

Each worker asks for a sweep when it connects to the broker, at start and after every
reconnection, and every ``SWEEP_S`` seconds after (a consumer step: Celery starts it again
with each new connection). The sweep itself is a task (``judging.recover_runs``,
``judging.recover_searches``, ``analysis.recover_improvements``): it restarts what shows no
sign of life.
"""

from __future__ import annotations

import logging
from typing import Any

from celery import bootsteps

logger = logging.getLogger(__name__)
SWEEP_S = 60.0


def sweep() -> None:
    from workers.tasks.adversarial import recover_searches
    from workers.tasks.improvement import recover_improvements
    from workers.tasks.judging import recover_runs

    try:
        recover_runs.delay()
        recover_searches.delay()
        recover_improvements.delay()
    except Exception as error:  # the broker is away again: the next sweep asks again
        logger.warning("could not ask for a sweep of abandoned work: %r", error)


class Sweeps(bootsteps.StartStopStep):
    requires = {"celery.worker.consumer.tasks:Tasks"}

    def __init__(self, parent: Any, **kwargs: Any) -> None:
        super().__init__(parent, **kwargs)
        self.timer_entry: Any = None

    def start(self, parent: Any) -> None:
        sweep()
        self.timer_entry = parent.timer.call_repeatedly(SWEEP_S, sweep)

    def stop(self, parent: Any) -> None:
        if self.timer_entry is not None:
            self.timer_entry.cancel()
            self.timer_entry = None
