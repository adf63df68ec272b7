"""The comparison page (methods §2): source, two texts in recorded random order, one criterion, keys
A-D. Next, back, submit and skip are the shared work pages (views/work.py). Its answer form, page,
API shapes and API (`work_api`, the API's next, skip, list and submit being api/work.py) are
declared here."""

from typing import Any

from django import forms
from rest_framework import serializers

from apps.annotation.api.work import WorkAPI, work_api
from apps.annotation.forms import AnswerForm
from apps.annotation.models import Choice, Comparison, Study
from apps.annotation.selectors.work import comparison_brief
from apps.annotation.serializers import AnswerSerializer
from apps.annotation.services import COMPARISON
from apps.annotation.views.work import WorkPage


class ChoiceForm(AnswerForm):
    choice = forms.ChoiceField(choices=Choice.choices)
    original_first = forms.TypedChoiceField(
        choices=[("1", "original first"), ("0", "perturbed first")], coerce=lambda v: v == "1"
    )


PAGE = WorkPage(
    work=COMPARISON,
    template="annotation/compare.html",
    form=ChoiceForm,
    prefix="compare",
    unit="<int:perturbation_pk>/<int:criterion_pk>/",
    submit="choice",
)


class ComparisonItemSerializer(serializers.Serializer):
    """One pair x criterion; `first` and `second` in the recorded order."""

    perturbation = serializers.IntegerField(source="perturbation.pk")
    criterion = serializers.IntegerField(source="criterion.pk")
    criterion_text = serializers.CharField()
    source = serializers.CharField(source="perturbation.item.source")
    first = serializers.CharField(source="first_text")
    second = serializers.CharField(source="second_text")
    original_first = serializers.BooleanField()


class ComparisonInSerializer(AnswerSerializer):
    perturbation = serializers.IntegerField()
    criterion = serializers.IntegerField()
    choice = serializers.ChoiceField(choices=Choice.choices)
    original_first = serializers.BooleanField(
        required=False, allow_null=True, default=None, help_text="The order shown."
    )


class ComparisonUnitSerializer(serializers.Serializer):
    perturbation = serializers.IntegerField()
    criterion = serializers.IntegerField()


class ComparisonSerializer(serializers.ModelSerializer):
    annotator = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = Comparison
        fields = [
            "id",
            "study",
            "perturbation",
            "criterion",
            "annotator",
            "group",
            "original_first",
            "choice",
            "outcome",
            "created_at",
            "updated_at",
        ]


class _ComparisonAPI(WorkAPI):
    def brief(self, study: Study, slot: Any) -> Any:
        return comparison_brief(study=study, annotator=self.request.user, slot=slot)


ComparisonAPI = work_api(
    COMPARISON,
    answers="comparisons",
    next="comparisons/next",
    skip="comparisons/skip",
    judgement=ComparisonSerializer,
    answer=ComparisonInSerializer,
    item=ComparisonItemSerializer,
    unit=ComparisonUnitSerializer,
    base=_ComparisonAPI,
)
