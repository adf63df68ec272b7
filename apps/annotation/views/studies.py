"""Pages: the home page (my studies) and the archived studies. The study's own page is in
apps/analysis/study_views.py (it shows every stage of the pipeline)."""

from django.http import HttpResponse
from django.shortcuts import render

from apps.accounts.permissions import IsAuthenticated, allow
from apps.accounts.requests import AuthedRequest
from apps.annotation.selectors import studies_listed


@allow(IsAuthenticated)
def home(request: AuthedRequest) -> HttpResponse:
    studies = studies_listed(request.user)
    return render(request, "annotation/home.html", {"studies": studies, "archived": False})


@allow(IsAuthenticated)
def archived(request: AuthedRequest) -> HttpResponse:
    studies = studies_listed(request.user, archived=True)
    return render(request, "annotation/home.html", {"studies": studies, "archived": True})
