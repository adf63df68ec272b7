"""Annotation models: studies and their plan, work slots, and human judgements."""

from apps.annotation.models.assessment import (
    Assessment,
    AssessmentSkip,
    AssessmentSlot,
    AssessmentUnit,
)
from apps.annotation.models.base import Judgement, LeasedSlot, Skip, judgement_types, unit_of
from apps.annotation.models.best_worst import (
    BestWorst,
    BestWorstSkip,
    BestWorstSlot,
    BestWorstTuple,
)
from apps.annotation.models.controls import CONTROL_UNITS, ControlItem, ControlServe
from apps.annotation.models.gold import (
    GOLD_CHECK_OVERLAP,
    GoldCheck,
    GoldCheckSkip,
    GoldCheckSlot,
)
from apps.annotation.models.judgements import (
    ACCEPTED_VERDICTS,
    ACTIVE_HELP,
    MOST_ACTIVE_SECONDS,
    Choice,
    Comparison,
    ExpertVote,
    JudgementChange,
    Outcome,
    Verdict,
    Vetting,
    judgement_version,
    original_shown_first,
    outcome_of,
    vetting_consensus,
)
from apps.annotation.models.panel import Panel, PanelLink, PanelSeat, Participant
from apps.annotation.models.study import (
    AssessedTexts,
    CriterionAssignment,
    Study,
    StudyMembership,
    StudyPerturbation,
    StudyQuerySet,
)
from apps.annotation.models.work import ComparisonSlot, VettingSkip, VettingSlot

__all__ = [
    "ACCEPTED_VERDICTS",
    "ACTIVE_HELP",
    "CONTROL_UNITS",
    "GOLD_CHECK_OVERLAP",
    "MOST_ACTIVE_SECONDS",
    "AssessedTexts",
    "Assessment",
    "AssessmentSkip",
    "AssessmentSlot",
    "AssessmentUnit",
    "BestWorst",
    "BestWorstSkip",
    "BestWorstSlot",
    "BestWorstTuple",
    "Choice",
    "Comparison",
    "ComparisonSlot",
    "ControlItem",
    "ControlServe",
    "CriterionAssignment",
    "ExpertVote",
    "GoldCheck",
    "GoldCheckSkip",
    "GoldCheckSlot",
    "Judgement",
    "JudgementChange",
    "LeasedSlot",
    "Outcome",
    "Panel",
    "PanelLink",
    "PanelSeat",
    "Participant",
    "Skip",
    "Study",
    "StudyMembership",
    "StudyPerturbation",
    "StudyQuerySet",
    "Verdict",
    "Vetting",
    "VettingSkip",
    "VettingSlot",
    "judgement_types",
    "judgement_version",
    "original_shown_first",
    "outcome_of",
    "unit_of",
    "vetting_consensus",
]
