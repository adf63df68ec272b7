"""The direct assessment page: one text and one criterion, a rating on its scale by keyboard (digits
choose, Enter saves). Next, back, submit and skip are the shared work pages. Its answer form, page,
API shapes and API (`work_api`, the API's next, skip, list and submit being api/work.py) are
declared here."""

from typing import Any

from django import forms
from rest_framework import serializers

from apps.annotation.api.work import WorkAPI, work_api
from apps.annotation.forms import AnswerForm
from apps.annotation.models import Assessment, Study
from apps.annotation.selectors.work import assessment_brief
from apps.annotation.serializers import AnswerSerializer, AssessmentUnitSerializer
from apps.annotation.services import ASSESSMENT
from apps.annotation.views.work import WorkPage


class RatingForm(AnswerForm):
    score = forms.IntegerField()


PAGE = WorkPage(
    work=ASSESSMENT,
    template="annotation/assess.html",
    form=RatingForm,
    prefix="assess",
    unit="<int:unit_pk>/",
    submit="rating",
)


class AssessmentItemSerializer(serializers.Serializer):
    """One text to rate under one criterion (whether it is an original or a perturbed text is
    not said: raters are blind to it)."""

    unit = serializers.IntegerField(source="unit.pk")
    criterion = serializers.CharField(source="unit.criterion.key")
    criterion_text = serializers.CharField()
    source = serializers.CharField(source="unit.item.source")
    text = serializers.CharField()
    text_name = serializers.CharField()
    scale_min = serializers.IntegerField(source="unit.criterion.scale_min")
    scale_max = serializers.IntegerField(source="unit.criterion.scale_max")
    based_on = serializers.IntegerField(help_text="Your rating's version (0: none yet).")


class AssessmentInSerializer(AnswerSerializer):
    unit = serializers.IntegerField()
    score = serializers.IntegerField(help_text="On the criterion's scale.")


class AssessmentSerializer(serializers.ModelSerializer):
    annotator = serializers.SlugRelatedField(slug_field="username", read_only=True)
    item = serializers.IntegerField(source="unit.item_id", read_only=True)
    perturbation = serializers.IntegerField(
        source="unit.perturbation_id", read_only=True, allow_null=True
    )
    criterion = serializers.SlugRelatedField(
        source="unit.criterion", slug_field="key", read_only=True
    )

    class Meta:
        model = Assessment
        fields = [
            "id",
            "study",
            "unit",
            "item",
            "perturbation",
            "criterion",
            "annotator",
            "score",
            "scale_min",
            "scale_max",
            "created_at",
            "updated_at",
        ]


class _AssessmentAPI(WorkAPI):
    def brief(self, study: Study, slot: Any) -> Any:
        return assessment_brief(study=study, annotator=self.request.user, slot=slot)


AssessmentAPI = work_api(
    ASSESSMENT,
    answers="assessments",
    next="assessments/next",
    skip="assessments/skip",
    judgement=AssessmentSerializer,
    answer=AssessmentInSerializer,
    item=AssessmentItemSerializer,
    unit=AssessmentUnitSerializer,
    related=("unit__criterion",),
    base=_AssessmentAPI,
)
