"""Pages: the home page (my studies) and a study's page."""

from django.http import HttpResponse
from django.shortcuts import render

from apps.accounts.requests import AuthedRequest
from apps.annotation.models import Study
from apps.annotation.selectors import study_for_user, study_overview, study_role


def home(request: AuthedRequest) -> HttpResponse:
    studies = Study.objects.for_user(request.user).select_related("owner")
    return render(request, "annotation/home.html", {"studies": studies})


def study_detail(request: AuthedRequest, pk: int) -> HttpResponse:
    study = study_for_user(request.user, pk)
    context = {
        "overview": study_overview(study),
        "role": study_role(request.user, study),
        "datasets": study.datasets.all(),
        "kinds": study.kinds.select_related("target_aspect"),
        "criteria": study.criteria.select_related("aspect"),
        "members": study.memberships.select_related("user"),
    }
    return render(request, "annotation/study_detail.html", context)
