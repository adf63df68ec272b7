"""Best-worst scaling's page and API: a tuple of texts under one criterion; digits pick the best,
then the worst, and Enter saves. Next, back, submit and skip are the shared work pages
(views/work.py) and the shared work API (api/work.py); this module declares only the answer,
the page and the shapes of the API."""

from __future__ import annotations

from typing import Any

from django import forms
from rest_framework import serializers

from apps.annotation.api.work import WorkAPI, work_api
from apps.annotation.forms import AnswerForm
from apps.annotation.models import Study
from apps.annotation.models.best_worst import BestWorst
from apps.annotation.selectors.best_worst import best_worst_item
from apps.annotation.serializers import AnswerSerializer, AssessmentUnitSerializer
from apps.annotation.services.best_worst import BEST_WORST
from apps.annotation.views.work import WorkPage


class BestWorstForm(AnswerForm):
    """Places in the tuple, 0 for its first text."""

    best = forms.IntegerField(min_value=0)
    worst = forms.IntegerField(min_value=0)


PAGE = WorkPage(
    work=BEST_WORST,
    template="annotation/best_worst.html",
    form=BestWorstForm,
    prefix="best-worst",
    unit="<int:unit_pk>/",
    submit="choice",
)


class BestWorstItemSerializer(serializers.Serializer):
    """One tuple of an item's texts under one criterion, in the order shown (which one is the
    original is not said). Answer with places in `texts`, 0 first."""

    unit = serializers.IntegerField(source="unit.pk")
    criterion = serializers.CharField(source="unit.criterion.key")
    criterion_text = serializers.CharField()
    source = serializers.CharField(source="unit.item.source")
    texts = serializers.ListField(child=serializers.CharField())
    text_name = serializers.CharField()
    based_on = serializers.IntegerField(help_text="Your answer's version (0: none yet).")


class BestWorstInSerializer(AnswerSerializer):
    unit = serializers.IntegerField()
    best = serializers.IntegerField(min_value=0, help_text="The best text's place, 0 first.")
    worst = serializers.IntegerField(min_value=0, help_text="The worst text's place, 0 first.")


class BestWorstSerializer(serializers.ModelSerializer):
    annotator = serializers.SlugRelatedField(slug_field="username", read_only=True)
    item = serializers.IntegerField(source="unit.item_id", read_only=True)
    texts = serializers.JSONField(
        source="unit.texts", read_only=True, help_text="Perturbation ids shown; null: original."
    )
    criterion = serializers.SlugRelatedField(
        source="unit.criterion", slug_field="key", read_only=True
    )

    class Meta:
        model = BestWorst
        fields = [
            "id",
            "study",
            "unit",
            "item",
            "texts",
            "criterion",
            "annotator",
            "best",
            "worst",
            "created_at",
            "updated_at",
        ]


class _BestWorstAPI(WorkAPI):
    def brief(self, study: Study, slot: Any) -> Any:
        user = self.request.user
        return best_worst_item(study=study, annotator=user, unit_id=slot.unit_id, held=True)


BestWorstAPI = work_api(
    BEST_WORST,
    answers="best-worst",
    next="best-worst/next",
    skip="best-worst/skip",
    judgement=BestWorstSerializer,
    answer=BestWorstInSerializer,
    item=BestWorstItemSerializer,
    unit=AssessmentUnitSerializer,
    related=("unit__criterion",),
    base=_BestWorstAPI,
)
