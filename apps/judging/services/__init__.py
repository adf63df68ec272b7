"""Judging services: judges, strategy versions, and judge runs from creation to completion.

A run's life: ``judge_run_create`` (validated selection) → ``judge_run_start`` (status
running; a worker task is queued on commit) → the task plans the calls once
(``judge_run_plan``), fans out to more tasks when a shared limiter allows, and each task works
(``engine.run_work``) until nothing is left → the last one marks the run done.
``judge_run_cancel`` stops the tasks at their next check; ``judge_run_resume`` starts them
again (optionally giving failed calls another try); ``judge_runs_recover`` restarts runs whose
workers died. Adversarial searches (``searches``) work their judge runs themselves.
"""

from apps.judging.services.connection_test import ConnectionTest, judge_connection_test
from apps.judging.services.imports import (
    ImportPreview,
    JudgePreview,
    judge_import,
    judge_import_preview,
)
from apps.judging.services.judges import (
    STRATEGY_FIELDS,
    judge_problems,
    judge_save,
    strategy_create,
    strategy_problems,
    strategy_revise,
)
from apps.judging.services.run_start import (
    RunEstimate,
    judge_run_confirm,
    judge_run_estimate,
)
from apps.judging.services.runs import (
    judge_run_cancel,
    judge_run_create,
    judge_run_rerun,
    judge_run_resume,
    judge_run_start,
)
from apps.judging.services.search_start import (
    SearchEstimate,
    adversarial_search_confirm,
    adversarial_search_estimate,
)
from apps.judging.services.searches import (
    JudgeChoice,
    SearchSetup,
    adversarial_search_cancel,
    adversarial_search_create,
    adversarial_search_fail,
    adversarial_search_resume,
    adversarial_search_start,
    adversarial_search_work,
    adversarial_searches_recover,
)
from apps.judging.services.shares import (
    judge_offer,
    judge_share_accept,
    judge_share_decline,
)
from apps.judging.services.work import (
    CALLS_PER_TASK,
    TASKS_PER_RUN,
    judge_run_fail,
    judge_run_fan_out,
    judge_run_plan,
    judge_run_work,
    judge_runs_recover,
    task_shares,
)

__all__ = [
    "CALLS_PER_TASK",
    "STRATEGY_FIELDS",
    "TASKS_PER_RUN",
    "ConnectionTest",
    "ImportPreview",
    "JudgeChoice",
    "JudgePreview",
    "RunEstimate",
    "SearchEstimate",
    "SearchSetup",
    "adversarial_search_cancel",
    "adversarial_search_confirm",
    "adversarial_search_create",
    "adversarial_search_estimate",
    "adversarial_search_fail",
    "adversarial_search_resume",
    "adversarial_search_start",
    "adversarial_search_work",
    "adversarial_searches_recover",
    "judge_connection_test",
    "judge_import",
    "judge_import_preview",
    "judge_offer",
    "judge_problems",
    "judge_run_cancel",
    "judge_run_confirm",
    "judge_run_create",
    "judge_run_estimate",
    "judge_run_fail",
    "judge_run_fan_out",
    "judge_run_plan",
    "judge_run_rerun",
    "judge_run_resume",
    "judge_run_start",
    "judge_run_work",
    "judge_runs_recover",
    "judge_save",
    "judge_share_accept",
    "judge_share_decline",
    "strategy_create",
    "strategy_problems",
    "strategy_revise",
    "task_shares",
]
