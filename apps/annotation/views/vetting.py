"""The vetting page (methods §3): one perturbation at a time, diff highlighted, keys 1-5; the
annotator may edit the perturbed text (a new version) and preview the diff while typing.

Next, back, submit and skip are the shared work pages (views/work.py). Its answer form, page, API
shapes and API (`work_api`, the API's next, skip, list and submit being api/work.py) are declared
here."""

from typing import Any

from django import forms
from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_POST
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.accounts.requests import AuthedRequest
from apps.annotation.api.work import WorkAPI, refusals, valid, work_api
from apps.annotation.forms import AnswerForm
from apps.annotation.models import Study, Verdict, Vetting
from apps.annotation.permissions import IsStudyAnnotator, study_access
from apps.annotation.selectors.work import diff_preview, vetting_brief, vetting_item
from apps.annotation.serializers import AnswerSerializer, KindBriefSerializer, VettingUnitSerializer
from apps.annotation.services import VETTING, perturbation_edit
from apps.annotation.views.responses import REFUSALS, bad_request, refused, saved_event
from apps.annotation.views.work import WorkPage
from apps.corpus.serializers import VersionSerializer


class VerdictForm(AnswerForm):
    verdict = forms.ChoiceField(choices=Verdict.choices)
    note = forms.CharField(required=False, max_length=5000)


class EditForm(forms.Form):
    text = forms.CharField(strip=False, max_length=1_000_000)
    note = forms.CharField(required=False, max_length=2000)


TEMPLATE = "annotation/vet.html"
PAGE = WorkPage(
    work=VETTING,
    template=TEMPLATE,
    form=VerdictForm,
    prefix="vet",
    unit="<int:perturbation_pk>/",
    submit="verdict",
)


@PAGE.allowed
@require_POST
def vet_edit(request: AuthedRequest, pk: int, perturbation_pk: int) -> HttpResponse:
    """Save the annotator's edit as a new version; answer the updated diff."""
    study = PAGE.study(request, pk)
    form = EditForm(request.POST)
    if not form.is_valid():
        return bad_request(form)
    try:
        perturbation_edit(
            study=study,
            annotator=request.user,
            perturbation_id=perturbation_pk,
            text=form.cleaned_data["text"],
            note=form.cleaned_data["note"],
        )
    except REFUSALS as exc:
        return refused(exc)
    item = vetting_item(study=study, annotator=request.user, perturbation_id=perturbation_pk)
    response = render(request, f"{TEMPLATE}#texts", {"study": study, "item": item})
    return saved_event(response, f"Edit saved as version {item.version}")


@PAGE.allowed
@require_POST
def vet_preview(request: AuthedRequest, pk: int, perturbation_pk: int) -> HttpResponse:
    """The diff of an edit being typed, not saved."""
    study = PAGE.study(request, pk)
    form = EditForm(request.POST)
    if not form.is_valid():
        return bad_request(form)
    item = vetting_item(study=study, annotator=request.user, perturbation_id=perturbation_pk)
    item.panes = diff_preview(item.perturbation.item.original, form.cleaned_data["text"])
    return render(request, f"{TEMPLATE}#texts", {"study": study, "item": item, "preview": True})


class VettingItemSerializer(serializers.Serializer):
    """One perturbation to vet, with the word-level diff (see apps/corpus/diff.py)."""

    perturbation = serializers.IntegerField(source="perturbation.pk")
    kind = KindBriefSerializer(source="perturbation.kind")
    source = serializers.CharField(source="perturbation.item.source")
    original = serializers.CharField(source="perturbation.item.original")
    text = serializers.CharField(source="perturbation.text")
    explanation = serializers.CharField(source="perturbation.explanation")
    text_name = serializers.CharField()
    version = serializers.IntegerField()
    diff = serializers.JSONField(source="perturbation.diff.ops")
    leased_until = serializers.DateTimeField(allow_null=True)


class VettingInSerializer(AnswerSerializer):
    perturbation = serializers.IntegerField()
    verdict = serializers.ChoiceField(choices=Verdict.choices)
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=5000)


class VettingSerializer(serializers.ModelSerializer):
    annotator = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = Vetting
        fields = [
            "id",
            "study",
            "perturbation",
            "annotator",
            "verdict",
            "note",
            "edited_version",
            "created_at",
            "updated_at",
        ]


class EditSerializer(serializers.Serializer):
    text = serializers.CharField(trim_whitespace=False, max_length=1_000_000)
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000)


class _VettingAPI(WorkAPI):
    def brief(self, study: Study, slot: Any) -> Any:
        return vetting_brief(slot)  # the stored diff, no HTML


VettingAPI = work_api(
    VETTING,
    answers="vettings",
    next="vetting/next",
    skip="vetting/skip",
    judgement=VettingSerializer,
    answer=VettingInSerializer,
    item=VettingItemSerializer,
    unit=VettingUnitSerializer,
    base=_VettingAPI,
)


class PerturbationEditView(APIView):
    permission_classes = [IsStudyAnnotator]

    @extend_schema(request=EditSerializer, responses={201: VersionSerializer})
    def post(self, request: Request, pk: int, perturbation_pk: int) -> Response:
        """Save your correction of a perturbed text you hold or vetted, as a new version."""
        study = study_access(request, pk).study
        data = valid(EditSerializer, request)
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
