"""The API of each type of work: its serializers on the generic `WorkAPI` (api/work.py)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.annotation import serializers as s
from apps.annotation.api.work import WorkAPI, refusals, valid, work_api
from apps.annotation.models import Study
from apps.annotation.permissions import IsStudyAnnotator, study_access
from apps.annotation.selectors.work import (
    assessment_brief,
    comparison_brief,
    gold_check_brief,
    vetting_brief,
)
from apps.annotation.services import (
    ASSESSMENT,
    COMPARISON,
    GOLD_CHECK,
    SURVEY,
    VETTING,
    perturbation_edit,
)
from apps.corpus.serializers import VersionSerializer


class _VettingAPI(WorkAPI):
    def brief(self, study: Study, slot: Any) -> Any:
        return vetting_brief(slot)  # the stored diff, no HTML


class _ComparisonAPI(WorkAPI):
    def brief(self, study: Study, slot: Any) -> Any:
        return comparison_brief(study=study, annotator=self.request.user, slot=slot)


class _AssessmentAPI(WorkAPI):
    def brief(self, study: Study, slot: Any) -> Any:
        return assessment_brief(study=study, annotator=self.request.user, slot=slot)


class _GoldCheckAPI(WorkAPI):
    def brief(self, study: Study, slot: Any) -> Any:
        return gold_check_brief(study=study, annotator=self.request.user, slot=slot)


VettingAPI = work_api(
    VETTING,
    answers="vettings",
    next="vetting/next",
    skip="vetting/skip",
    judgement=s.VettingSerializer,
    answer=s.VettingInSerializer,
    item=s.VettingItemSerializer,
    unit=s.VettingUnitSerializer,
    base=_VettingAPI,
)
ComparisonAPI = work_api(
    COMPARISON,
    answers="comparisons",
    next="comparisons/next",
    skip="comparisons/skip",
    judgement=s.ComparisonSerializer,
    answer=s.ComparisonInSerializer,
    item=s.ComparisonItemSerializer,
    unit=s.ComparisonUnitSerializer,
    base=_ComparisonAPI,
)
SurveyAPI = work_api(
    SURVEY,
    answers="expert-votes",
    judgement=s.ExpertVoteSerializer,
    answer=s.ExpertVoteInSerializer,
    related=("task", "kind", "metric"),
)
AssessmentAPI = work_api(
    ASSESSMENT,
    answers="assessments",
    next="assessments/next",
    skip="assessments/skip",
    judgement=s.AssessmentSerializer,
    answer=s.AssessmentInSerializer,
    item=s.AssessmentItemSerializer,
    unit=s.AssessmentUnitSerializer,
    related=("unit__criterion",),
    base=_AssessmentAPI,
)
GoldCheckAPI = work_api(
    GOLD_CHECK,
    answers="gold-checks",
    next="gold-checks/next",
    skip="gold-checks/skip",
    judgement=s.GoldCheckSerializer,
    answer=s.GoldCheckInSerializer,
    item=s.GoldCheckItemSerializer,
    unit=s.VettingUnitSerializer,
    base=_GoldCheckAPI,
)


class PerturbationEditView(APIView):
    permission_classes = [IsStudyAnnotator]

    @extend_schema(request=s.EditSerializer, responses={201: VersionSerializer})
    def post(self, request: Request, pk: int, perturbation_pk: int) -> Response:
        """Save your correction of a perturbed text you hold or vetted, as a new version."""
        study = study_access(request, pk).study
        data = valid(s.EditSerializer, request)
        version = refusals(
            lambda: perturbation_edit(
                study=study,
                annotator=request.user,
                perturbation_id=perturbation_pk,
                text=data["text"],
                note=data["note"],
            )
        )
        return Response(VersionSerializer(version).data, status=201)
