"""The researcher's progress page (`/studies/{id}/progress/`, polled every 5 s for its live
part) and its API (`progress/`, `weights/`): see apps/analysis/progress.py."""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import render
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.accounts.permissions import allow
from apps.accounts.requests import AuthedRequest
from apps.analysis.controls import control_accuracy
from apps.analysis.progress import kind_weights, progress_with_analysis
from apps.annotation.forms import StudySettingsForm
from apps.annotation.permissions import STUDY_RESEARCHERS, study_access

TEMPLATE = "annotation/progress.html"


@allow(STUDY_RESEARCHERS)
def progress(request: AuthedRequest, pk: int) -> HttpResponse:
    """The study's researchers: counts per study, annotator and kind, agreement, live expert
    weights; and the annotation settings with the plan."""
    study = study_access(request, pk).study
    context = {
        "study": study,
        "progress": progress_with_analysis(study),
        "weights": kind_weights(study),
        "controls": control_accuracy(study),
    }
    if request.htmx:
        return render(request, f"{TEMPLATE}#live", context)
    context["form"] = StudySettingsForm(instance=study)
    return render(request, TEMPLATE, context)


class StudyProgressView(APIView):
    permission_classes = [STUDY_RESEARCHERS]

    @extend_schema(responses={200: OpenApiResponse(description="Counts of work and judgements.")})
    def get(self, request: Request, pk: int) -> Response:
        """The study's progress (researchers): the counts of every type of work, per
        annotator (with their agreement) and per kind; each annotator's accuracy on control
        items (`controls`)."""
        study = study_access(request, pk).study
        figures = progress_with_analysis(study).as_dict()
        figures["controls"] = [row.as_dict() for row in control_accuracy(study)]
        return Response(figures)


class StudyWeightsView(APIView):
    permission_classes = [STUDY_RESEARCHERS]

    @extend_schema(responses={200: OpenApiResponse(description="Expert weights per kind.")})
    def get(self, request: Request, pk: int) -> Response:
        """Votes and expert weights per surveyed (task, kind) (researchers)."""
        study = study_access(request, pk).study
        return Response(
            [
                {
                    "task": row.task.slug,
                    "kind": row.kind.slug,
                    "votes": row.votes,
                    "weights": {metric.slug: w for metric, _, w in row.cells},
                    "counts": {metric.slug: n for metric, n, _ in row.cells},
                }
                for row in kind_weights(study)
            ]
        )
