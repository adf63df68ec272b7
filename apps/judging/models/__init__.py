"""Judging models: judges, strategies (versioned), judge runs and every judge call."""

from apps.judging.models.call import JudgeCall, ParseStatus, Preferred
from apps.judging.models.judge import Judge, JudgeKind, MetricName
from apps.judging.models.run import JudgeRun, RunStatus
from apps.judging.models.strategy import Family, Strategy, Technique

__all__ = [
    "Family",
    "Judge",
    "JudgeCall",
    "JudgeKind",
    "JudgeRun",
    "MetricName",
    "ParseStatus",
    "Preferred",
    "RunStatus",
    "Strategy",
    "Technique",
]
