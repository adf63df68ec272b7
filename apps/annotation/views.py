"""Pages: the home page (my studies) and a study's page."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from apps.annotation.models import Study
from apps.annotation.selectors import study_for_user, study_overview


def home(request: HttpRequest) -> HttpResponse:
    studies = Study.objects.for_user(request.user).select_related("owner")
    return render(request, "annotation/home.html", {"studies": studies})


def study_detail(request: HttpRequest, pk: int) -> HttpResponse:
    study = study_for_user(request.user, pk)
    context = {
        "overview": study_overview(study),
        "datasets": study.datasets.all(),
        "kinds": study.kinds.select_related("target_aspect"),
        "criteria": study.criteria.select_related("aspect"),
        "members": study.memberships.select_related("user"),
    }
    return render(request, "annotation/study_detail.html", context)
