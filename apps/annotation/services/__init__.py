"""Annotation services: the plan, handing out work, and saving judgements exactly once."""

from apps.annotation.services.comparing import (
    comparison_next,
    comparison_skip,
    comparison_submit,
    original_shown_first,
)
from apps.annotation.services.errors import KeyReused, StaleJudgement, WorkRefused
from apps.annotation.services.leases import vetting_next, vetting_skip
from apps.annotation.services.plan import PlanSummary, study_plan_build, study_plan_request
from apps.annotation.services.vetting import (
    Saved,
    may_vet,
    perturbation_edit,
    vetting_submit,
)
from apps.annotation.services.votes import expert_vote_submit

__all__ = [
    "KeyReused",
    "PlanSummary",
    "Saved",
    "StaleJudgement",
    "WorkRefused",
    "comparison_next",
    "comparison_skip",
    "comparison_submit",
    "expert_vote_submit",
    "may_vet",
    "original_shown_first",
    "perturbation_edit",
    "study_plan_build",
    "study_plan_request",
    "vetting_next",
    "vetting_skip",
    "vetting_submit",
]
