"""Annotation models: studies and their plan, work slots, and human judgements.

Every module of this package is imported here, so a kind of work's models (its own module) are
known without naming them; then the history gets its link to each type of judgement. The
models other layers use everywhere are named below.
"""

from apps.annotation.models.assessment import (
    AssessedTexts,
    Assessment,
    AssessmentSkip,
    AssessmentSlot,
    AssessmentUnit,
)
from apps.annotation.models.base import (
    Judgement,
    LeasedSlot,
    Skip,
    judgement_links,
    judgement_types,
    unit_of,
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
    CriterionAssignment,
    Study,
    StudyMembership,
    StudyPerturbation,
    StudyQuerySet,
)
from apps.annotation.models.work import ComparisonSlot, VettingSkip, VettingSlot
from apps.discovery import import_submodules

import_submodules(__name__, __path__)
judgement_links(JudgementChange)

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
