"""Annotation services: the plan, handing out work, and saving judgements exactly once.

Each type of human work is a `Work` (services/work.py) registered by its own module: importing
this package imports every module of it, so every type is known to the plan, the pages and the
API without being named here.
"""

from apps.annotation.kinds import work_type, work_types
from apps.annotation.models import original_shown_first
from apps.annotation.services.assessing import ASSESSMENT
from apps.annotation.services.comparing import COMPARISON
from apps.annotation.services.errors import KeyReused, StaleJudgement, WorkRefused
from apps.annotation.services.gold_checks import GOLD_CHECK, gold_check_submit
from apps.annotation.services.plan import PlanSummary, study_plan_build, study_plan_request
from apps.annotation.services.vetting import VETTING, may_vet, perturbation_edit
from apps.annotation.services.votes import SURVEY, expert_vote_submit
from apps.annotation.services.work import Saved, Work
from apps.discovery import import_submodules

import_submodules(__name__, __path__)

__all__ = [
    "ASSESSMENT",
    "COMPARISON",
    "GOLD_CHECK",
    "SURVEY",
    "VETTING",
    "KeyReused",
    "PlanSummary",
    "Saved",
    "StaleJudgement",
    "Work",
    "WorkRefused",
    "expert_vote_submit",
    "gold_check_submit",
    "may_vet",
    "original_shown_first",
    "perturbation_edit",
    "study_plan_build",
    "study_plan_request",
    "work_type",
    "work_types",
]
