"""A study's page: for its researchers the pipeline in order with the next action at each
stage and the raw data downloads; for annotators and experts their work."""

from typing import Any

from django.http import HttpResponse
from django.shortcuts import render

from apps.accounts.models import Role
from apps.accounts.permissions import allow
from apps.accounts.requests import AuthedRequest
from apps.analysis.pipeline import study_counts, study_pipeline
from apps.analysis.raw_data import FORMATS, tables
from apps.annotation.demo import DEMO_SLUG
from apps.annotation.permissions import IsStudyMember, IsStudyOwner, study_access
from apps.annotation.selectors import study_overview


@allow(IsStudyOwner | IsStudyMember)
def study_detail(request: AuthedRequest, pk: int) -> HttpResponse:
    access = study_access(request, pk)
    study, role = access.study, access.role
    context: dict[str, Any] = {
        "study": study,
        "role": role,
        "can_manage": access.owner,
        "demo": access.owner and study.slug == DEMO_SLUG,
    }
    if role == Role.RESEARCHER:
        counts = study_counts(study)
        context.update(
            counts=counts,
            pipeline=study_pipeline(study, counts),
            tables=tables(),
            formats=list(FORMATS),
        )
    else:
        context["overview"] = study_overview(study)
    return render(request, "annotation/study_detail.html", context)
