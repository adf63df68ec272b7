"""Annotation models: studies and their plan, work slots, and human judgements."""

from apps.annotation.models.judgements import (
    ACCEPTED_VERDICTS,
    Choice,
    Comparison,
    ExpertVote,
    JudgementChange,
    Outcome,
    Verdict,
    Vetting,
    outcome_of,
    vetting_consensus,
    vetting_version,
)
from apps.annotation.models.study import (
    CriterionAssignment,
    Study,
    StudyMembership,
    StudyPerturbation,
    StudyQuerySet,
)
from apps.annotation.models.work import ComparisonSlot, VettingSkip, VettingSlot

__all__ = [
    "ACCEPTED_VERDICTS",
    "Choice",
    "Comparison",
    "ComparisonSlot",
    "CriterionAssignment",
    "ExpertVote",
    "JudgementChange",
    "Outcome",
    "Study",
    "StudyMembership",
    "StudyPerturbation",
    "StudyQuerySet",
    "Verdict",
    "Vetting",
    "VettingSkip",
    "VettingSlot",
    "outcome_of",
    "vetting_consensus",
    "vetting_version",
]
