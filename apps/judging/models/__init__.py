"""Judging models: judges, strategies (versioned), judge runs and every judge call, audits."""

from apps.judging.models.audit import AuditPart, AuditStatus, AuditSubject, JudgeAudit, PartKind
from apps.judging.models.batch import BatchStatus, CallBatch
from apps.judging.models.call import JudgeCall, ParseStatus, Preferred
from apps.judging.models.improvement import Improvement, ImprovementCandidate, Origin, Stage
from apps.judging.models.judge import Judge, JudgeKind, JudgeShare, MetricName
from apps.judging.models.run import JudgeRun, RunRequests, RunStatus
from apps.judging.models.search import (
    AdversarialSearch,
    Candidate,
    CandidateOrigin,
    Direction,
    ItemStatus,
    IterationStatus,
    Method,
    Role,
    SearchItem,
    SearchIteration,
    SearchJudge,
    StopReason,
)
from apps.judging.models.strategy import Family, Strategy, Technique

__all__ = [
    "AdversarialSearch",
    "AuditPart",
    "AuditStatus",
    "AuditSubject",
    "BatchStatus",
    "CallBatch",
    "Candidate",
    "CandidateOrigin",
    "Direction",
    "Family",
    "Improvement",
    "ImprovementCandidate",
    "ItemStatus",
    "IterationStatus",
    "Judge",
    "JudgeAudit",
    "JudgeCall",
    "JudgeKind",
    "JudgeRun",
    "JudgeShare",
    "Method",
    "MetricName",
    "Origin",
    "ParseStatus",
    "PartKind",
    "Preferred",
    "Role",
    "RunRequests",
    "RunStatus",
    "SearchItem",
    "SearchIteration",
    "SearchJudge",
    "Stage",
    "StopReason",
    "Strategy",
    "Technique",
]
