"""Adversarial search API shapes; the checks that span fields stay in the service."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from apps.accounts.permissions import owned_by
from apps.annotation.models import Study
from apps.catalog.models import Criterion
from apps.corpus.models import Dataset
from apps.corpus.selectors import datasets_for_user
from apps.corpus.serializers import EndpointNameField
from apps.endpoints.models import Endpoint
from apps.endpoints.selectors import endpoints_for_user
from apps.judging.models import (
    AdversarialSearch,
    Candidate,
    Direction,
    Judge,
    SearchItem,
    SearchJudge,
    Strategy,
)
from apps.judging.selectors import judges_for_user, strategies_for_user
from apps.judging.services import JudgeChoice, SearchSetup


class ChoiceSerializer(serializers.Serializer):
    """A judge and, for an LLM judge, its strategy."""

    judge = serializers.PrimaryKeyRelatedField(queryset=Judge.objects.none())
    strategy = serializers.PrimaryKeyRelatedField(
        queryset=Strategy.objects.none(), required=False, allow_null=True, default=None
    )

    def limit_to(self, user: Any) -> None:
        """Only the judges and strategies this user may use (others do not exist)."""
        fields: Any = self.fields
        fields["judge"].queryset = judges_for_user(user)
        fields["strategy"].queryset = strategies_for_user(user, latest=False)


class SearchCreateSerializer(serializers.Serializer):
    """The inputs of a search (docs/adversarial.md, "Setting up a search")."""

    dataset = serializers.PrimaryKeyRelatedField(queryset=Dataset.objects.none())
    study = serializers.PrimaryKeyRelatedField(
        queryset=Study.objects.none(), required=False, allow_null=True, default=None
    )
    item_ids = serializers.ListField(child=serializers.IntegerField(), required=False, default=list)
    direction = serializers.ChoiceField(choices=Direction.choices)
    generator = EndpointNameField(
        slug_field="name",
        queryset=Endpoint.objects.none(),
        help_text="A model endpoint's name, as for generation jobs (an LLM judge's endpoint "
        "bears the judge's name).",
    )
    victim = ChoiceSerializer()
    gold = ChoiceSerializer(many=True)
    criterion = serializers.PrimaryKeyRelatedField(
        queryset=Criterion.objects.all(), required=False, allow_null=True, default=None
    )
    criterion_in_prompt = serializers.BooleanField(default=True)
    alpha = serializers.FloatField(default=1.0)
    target_score = serializers.FloatField(default=60.0)
    max_iterations = serializers.IntegerField(default=10, min_value=1, max_value=1000)
    query_budget = serializers.IntegerField(default=300, min_value=1)
    candidates_per_iteration = serializers.IntegerField(default=4, min_value=1, max_value=50)
    generator_temperature = serializers.FloatField(default=1.0, min_value=0.0, max_value=2.0)
    generator_max_tokens = serializers.IntegerField(default=1024, min_value=1)
    tau1 = serializers.FloatField(required=False, allow_null=True, default=None)
    tau2 = serializers.FloatField(default=40.0)
    rule_baseline = serializers.BooleanField(default=True)
    label = serializers.CharField(  # type: ignore[assignment]  # a field, not Field.label
        max_length=200, required=False, default="", allow_blank=True
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        request = self.context.get("request")
        if request is None:  # the schema generator
            return
        user = request.user
        fields: Any = self.fields
        fields["dataset"].queryset = datasets_for_user(user)
        fields["study"].queryset = owned_by(Study.objects.all(), user)
        fields["generator"].queryset = endpoints_for_user(user)
        fields["victim"].limit_to(user)
        fields["gold"].child.limit_to(user)

    def setup(self) -> SearchSetup:
        data = dict(self.validated_data)
        victim = data.pop("victim")
        gold = data.pop("gold")
        return SearchSetup(
            victim=JudgeChoice(victim["judge"], victim.get("strategy")),
            gold=[JudgeChoice(g["judge"], g.get("strategy")) for g in gold],
            **data,
        )


class SearchJudgeSerializer(serializers.ModelSerializer):
    class Meta:
        model = SearchJudge
        fields = ["role", "judge", "strategy", "run"]
        read_only_fields = fields


class SearchSerializer(serializers.ModelSerializer):
    judges = SearchJudgeSerializer(many=True, read_only=True)
    generator: serializers.SlugRelatedField = serializers.SlugRelatedField(
        slug_field="name", read_only=True
    )
    success_tau1 = serializers.FloatField(read_only=True)

    class Meta:
        model = AdversarialSearch
        fields = [
            "id",
            "label",
            "dataset",
            "study",
            "item_ids",
            "direction",
            "generator",
            "judges",
            "criterion",
            "criterion_in_prompt",
            "alpha",
            "target_score",
            "max_iterations",
            "query_budget",
            "candidates_per_iteration",
            "generator_temperature",
            "generator_max_tokens",
            "tau1",
            "success_tau1",
            "tau2",
            "rule_baseline",
            "status",
            "error",
            "generator_calls",
            "generator_cached",
            "generator_http_requests",
            "generator_prompt_tokens",
            "generator_completion_tokens",
            "created_at",
            "started_at",
            "finished_at",
        ]
        read_only_fields = fields


class CandidateSerializer(serializers.ModelSerializer):
    iteration = serializers.IntegerField(source="iteration.number", read_only=True)

    class Meta:
        model = Candidate
        fields = [
            "id",
            "iteration",
            "index",
            "text",
            "origin",
            "provenance",
            "duplicate_of",
            "s_gold",
            "s_victim",
            "s_fb",
            "gold_by_judge",
            "unscored",
        ]
        read_only_fields = fields


class SearchItemSerializer(serializers.ModelSerializer):
    external_id = serializers.CharField(source="item.external_id", read_only=True)
    best = CandidateSerializer(read_only=True)

    class Meta:
        model = SearchItem
        fields = [
            "id",
            "item",
            "external_id",
            "method",
            "status",
            "stop_reason",
            "error",
            "iterations",
            "victim_queries",
            "gold_queries",
            "best",
            "success",
            "perturbation",
        ]
        read_only_fields = fields
