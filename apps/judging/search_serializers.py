"""Adversarial search API shapes; the checks that span fields stay in the service."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
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
    ItemStatus,
    Judge,
    SearchIteration,
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
    dry_run = serializers.BooleanField(
        default=False, help_text="Answer with the estimate only; nothing is recorded or sent."
    )
    confirm = serializers.BooleanField(
        default=False,
        help_text="Start a search whose HTTP requests (at most) exceed the study's limit.",
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
        data.pop("dry_run", None), data.pop("confirm", None)
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


class SearchEstimateRoleSerializer(serializers.Serializer):
    role = serializers.CharField(help_text="victim, gold or generator")
    name = serializers.CharField(help_text="The judge's name, or the generator endpoint's.")
    model = serializers.CharField()
    calls = serializers.IntegerField()
    cached_calls = serializers.IntegerField(help_text="Answered by the cache: no request.")
    http_calls = serializers.IntegerField()
    prompt_tokens = serializers.IntegerField()
    completion_tokens = serializers.IntegerField()
    cost = serializers.CharField(allow_null=True, help_text="From its judge's prices, if set.")


class SearchEstimateSerializer(serializers.Serializer):
    """What starting a search would send (services.search_start.SearchEstimate)."""

    calls = serializers.IntegerField()
    cached_calls = serializers.IntegerField(help_text="Answered by the cache: no request.")
    http_calls = serializers.IntegerField(help_text="At most, when upper_bound.")
    prompt_tokens = serializers.IntegerField(help_text="500 a request (assumed).")
    completion_tokens = serializers.IntegerField()
    cost = serializers.CharField(
        allow_null=True, help_text="Of the roles with prices (null: none has any)."
    )
    unpriced = serializers.ListField(
        child=serializers.CharField(), help_text="Roles left out of the cost: no prices."
    )
    basis = serializers.CharField(help_text="How the figures were reached.")
    upper_bound = serializers.BooleanField(
        help_text="True: upper bounds from the search's limits; false: a replay from the cache."
    )
    limit = serializers.IntegerField(help_text="HTTP requests above which it needs confirm.")
    over_limit = serializers.BooleanField()
    roles = SearchEstimateRoleSerializer(many=True)


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


METHOD_HELP = "adveval (the generator LLM) or rules (the rule baseline)."


class SearchItemSerializer(serializers.Serializer):
    """A search item (``search_selectors.ItemView``): its state, counts, best text so far,
    and whether it has a result: an item whose candidates were all unread or unscored has
    none (``has_result`` false, ``no_result_reason`` says why, ``success`` null)."""

    id = serializers.IntegerField(source="item.pk")
    item = serializers.IntegerField(source="item.item_id")
    external_id = serializers.CharField(source="item.item.external_id")
    method = serializers.CharField(source="item.method", help_text=METHOD_HELP)
    status = serializers.ChoiceField(choices=ItemStatus.choices, source="item.status")
    stop_reason = serializers.CharField(source="item.stop_reason")
    error = serializers.CharField(source="item.error")
    iterations = serializers.IntegerField(source="item.iterations")
    victim_queries = serializers.IntegerField(source="item.victim_queries")
    gold_queries = serializers.IntegerField(source="item.gold_queries")
    best = CandidateSerializer(source="item.best", allow_null=True)
    success = serializers.BooleanField(
        allow_null=True,
        help_text="Whether the final text is a successful attack (R+: a good text the victim "
        "scores low; R-: a poor text the victim scores high); null without a result.",
    )
    has_result = serializers.BooleanField(
        help_text="At least one candidate beyond R0 was scored (or R0 reached the target)."
    )
    no_result_reason = serializers.CharField(
        source="no_result", help_text="Why the item has no result, with the counts; empty with one."
    )
    generator_calls = serializers.IntegerField(
        source="tally.calls", help_text="Generator calls, format retries and failed calls included."
    )
    format_retries = serializers.IntegerField(source="tally.retries")
    generator_replies = serializers.IntegerField(
        source="tally.replies", help_text="Generator calls that got a reply."
    )
    generator_unparsed = serializers.IntegerField(
        source="tally.unparsed", help_text="Generator replies that held no readable candidate."
    )
    perturbation = serializers.IntegerField(source="item.perturbation_id", allow_null=True)


class IterationSerializer(serializers.ModelSerializer):
    """One iteration of an item: the generator's raw reply and its format retry, kept also
    when no candidate could be read from them."""

    class Meta:
        model = SearchIteration
        fields = [
            "id",
            "number",
            "status",
            "wanted",
            "parse_status",
            "parse_reason",
            "raw_response",
            "format_retry",
            "cached",
            "attempts",
            "error_kind",
            "error",
        ]
        read_only_fields = fields


class MethodOutcomeSerializer(serializers.Serializer):
    """The items of one method of a search (``search_selectors.MethodSummary``)."""

    method = serializers.CharField(help_text=METHOD_HELP)
    label = serializers.CharField()  # type: ignore[assignment]  # a field, not Field.label
    items = serializers.IntegerField(source="tally.items")
    items_with_result = serializers.IntegerField(source="tally.with_result")
    items_no_result = serializers.IntegerField(
        source="missing.items", help_text="Items the search finished with no result."
    )
    no_result_reason = serializers.CharField(help_text="Why, with the counts; empty if none.")
    generator_calls = serializers.IntegerField(source="tally.calls")
    format_retries = serializers.IntegerField(source="tally.retries")
    failed_generator_calls = serializers.IntegerField(source="tally.failed_calls")
    generator_replies = serializers.IntegerField(source="tally.replies")
    generator_unparsed = serializers.IntegerField(source="tally.unparsed")


class SearchDetailSerializer(SearchSerializer):
    """A search with what each method's items produced (given in the context)."""

    outcomes = serializers.SerializerMethodField()

    class Meta(SearchSerializer.Meta):
        fields = [*SearchSerializer.Meta.fields, "outcomes"]
        read_only_fields = fields

    @extend_schema_field(MethodOutcomeSerializer(many=True))
    def get_outcomes(self, search: AdversarialSearch) -> Any:
        return MethodOutcomeSerializer(self.context["outcomes"], many=True).data
