"""The engine: works through a judge run's calls in this process.

The thread that calls ``run_work`` (a Celery task's) does everything with the database:
claims pending calls in batches, builds their prompts, looks up the cache, and saves results
in small batches. An LLM judge's run is a coroutine in an event loop beside that thread
(``llm_work``), which hands the thread its database work; each distinct prompt claimed gets
its own coroutine, which asks the endpoint through the runner's core
(``apps.endpoints.runner.Asker``: one POST per attempt, its retries and the format retry)
under the limiter of the judge's endpoint (``apps.endpoints.limiter``: with Redis, the task's
share of the endpoint's slots, reserved from a semaphore all workers and every caller of the
endpoint share, and its requests-per-minute limit), fills its calls from the reply and waits
for their save.

Modules: ``work`` (claims, saves, leases, cancellation; metric judges), ``llm_work`` (LLM
judges: prompts, cache, requests, stall watch), ``params`` (sampling parameters), ``once``
(request counting and prompt claims).

One distinct prompt (cache key) is asked once per run: within a task the calls sharing it
wait for one request, and across the run's tasks each prompt is claimed by one task
(``once.PromptClaims``); the others reuse the reply as cached calls. Errors are never reused:
a follower of a failed request asks itself. Every HTTP attempt is counted just before it is
sent (``once.RequestCounter``), so the run's request counter equals what the server received.
"""

from __future__ import annotations

from apps.judging.engine.llm_work import LlmWork
from apps.judging.engine.params import sampling_params
from apps.judging.engine.work import MetricWork, Work
from apps.judging.models import JudgeRun

__all__ = ["LlmWork", "MetricWork", "Work", "run_work", "sampling_params"]


def run_work(run: JudgeRun, *, token: str, share: int, node: str = "") -> None:
    """Work on ``run`` until no call is left to claim, or it is cancelled. Call it from a
    thread that runs no event loop (a worker task's): an LLM judge's run starts its own."""
    work: Work = MetricWork(run, token) if run.judge.is_metric else LlmWork(run, token, share, node)
    work.run_all()
