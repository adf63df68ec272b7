"""The gold validation page: one adversarial text, labelled good (1) or not good (2) by keyboard,
saved at once. Next, back, submit and skip are the shared work pages. Its answer form, page, API
shapes and API (`work_api`, the API's next, skip, list and submit being api/work.py) are declared
here."""

from typing import Any

from django import forms
from rest_framework import serializers

from apps.annotation.api.work import WorkAPI, work_api
from apps.annotation.forms import AnswerForm
from apps.annotation.models import GoldCheck, Study
from apps.annotation.selectors.work import gold_check_brief
from apps.annotation.serializers import AnswerSerializer, VettingUnitSerializer
from apps.annotation.services import GOLD_CHECK
from apps.annotation.views.work import WorkPage


class GoldCheckForm(AnswerForm):
    good = forms.TypedChoiceField(
        choices=[("1", "good"), ("0", "not good")], coerce=lambda value: value == "1"
    )


PAGE = WorkPage(
    work=GOLD_CHECK,
    template="annotation/gold_check.html",
    form=GoldCheckForm,
    prefix="gold-check",
    unit="<int:perturbation_pk>/",
    submit="label",
)


class GoldCheckItemSerializer(serializers.Serializer):
    """One adversarial text to label good or not good (the judges' scores are not shown)."""

    perturbation = serializers.IntegerField(source="perturbation.pk")
    task = serializers.CharField(source="task_name")
    task_description = serializers.CharField()
    source = serializers.CharField(source="perturbation.item.source")
    criterion_text = serializers.CharField()
    text = serializers.CharField(source="perturbation.text")
    text_name = serializers.CharField()
    based_on = serializers.IntegerField(help_text="Your label's version (0: none yet).")


class GoldCheckInSerializer(AnswerSerializer):
    perturbation = serializers.IntegerField()
    good = serializers.BooleanField(help_text="True: good; false: not good.")


class GoldCheckSerializer(serializers.ModelSerializer):
    annotator = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = GoldCheck
        fields = ["id", "study", "perturbation", "annotator", "good", "created_at", "updated_at"]


class _GoldCheckAPI(WorkAPI):
    def brief(self, study: Study, slot: Any) -> Any:
        return gold_check_brief(study=study, annotator=self.request.user, slot=slot)


GoldCheckAPI = work_api(
    GOLD_CHECK,
    answers="gold-checks",
    next="gold-checks/next",
    skip="gold-checks/skip",
    judgement=GoldCheckSerializer,
    answer=GoldCheckInSerializer,
    item=GoldCheckItemSerializer,
    unit=VettingUnitSerializer,
    base=_GoldCheckAPI,
)
