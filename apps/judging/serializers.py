"""Judging API shapes; validation of what spans fields stays in the services."""

from rest_framework import serializers

from apps.accounts.models import Role, User
from apps.annotation.models import Study
from apps.catalog.models import Criterion, Metric, PerturbationKind
from apps.corpus.models import Dataset
from apps.endpoints.models import ENDPOINT_SETTINGS, Endpoint
from apps.judging.models import Judge, JudgeCall, JudgeRun, JudgeShare, Strategy
from apps.judging.services import STRATEGY_FIELDS


class EndpointSettingsSerializer(serializers.ModelSerializer):
    """An endpoint's settings, each checked as the model checks it."""

    class Meta:
        model = Endpoint
        fields = list(ENDPOINT_SETTINGS)


class JudgeSerializer(serializers.ModelSerializer):
    """A judge; an LLM judge's endpoint settings (base URL, model, key variable, limits) are
    read and written here too: they are kept on the judge's own endpoint (apps.endpoints),
    and null for a metric judge."""

    shared_with = serializers.SlugRelatedField(
        slug_field="username",
        many=True,
        required=False,
        queryset=User.objects.filter(role=Role.RESEARCHER),
        help_text="Researchers this judge is offered to; each may use (not change) it once they "
        "accept. Only its owner sets this.",
    )
    owner = serializers.SlugRelatedField(
        source="created_by",
        slug_field="username",
        read_only=True,
        help_text="Who made the judge (null: shipped with Discern).",
    )
    shares = serializers.SerializerMethodField(
        help_text="Each researcher it is shared with and the share's state: offered (not yet "
        "accepted) or accepted."
    )

    class Meta:
        model = Judge
        fields = [
            "id",
            "name",
            "kind",
            "metric",
            "price_per_million_prompt_tokens",
            "price_per_million_completion_tokens",
            "batch_price_percent",
            "owner",
            "shared_with",
            "shares",
            "created_at",
        ]
        read_only_fields = ["created_at"]

    def get_shares(self, judge: Judge) -> list[dict[str, str]]:
        shares = sorted(judge.shares.all(), key=lambda share: share.user.username)
        return [{"username": share.user.username, "state": share.state} for share in shares]

    def get_fields(self):
        fields = super().get_fields()
        settings = EndpointSettingsSerializer().get_fields()
        for name, field in settings.items():
            field.source = f"endpoint.{name}"
            field.required, field.allow_null = False, True  # checked for LLM judges; metric: null
        order = ["id", "name", "kind", *ENDPOINT_SETTINGS, *list(fields)[3:]]
        return {name: settings.get(name) or fields[name] for name in order}


class JudgeOfferSerializer(serializers.ModelSerializer):
    """A judge offered to you: who offers it, its name, and where its calls (with your texts)
    would go. You see and use the judge only once you accept."""

    owner = serializers.CharField(source="judge.created_by.username", read_only=True)
    judge_name = serializers.CharField(source="judge.name", read_only=True)
    host = serializers.CharField(
        read_only=True, help_text="Its base URL's host; empty for a metric."
    )
    model = serializers.CharField(
        source="endpoint_model", read_only=True, help_text="The model it calls; empty for a metric."
    )

    class Meta:
        model = JudgeShare
        fields = ["id", "judge", "judge_name", "owner", "host", "model", "offered_at"]
        read_only_fields = fields


class StrategySerializer(serializers.ModelSerializer):
    class Meta:
        model = Strategy
        fields = ["id", "slug", "version", *STRATEGY_FIELDS, "note", "created_at"]
        read_only_fields = ["version", "created_at"]
        validators: list = []  # versions are numbered by the service


class StrategyRevisionSerializer(serializers.ModelSerializer):
    """Any strategy fields to change; the rest are copied from the version revised."""

    class Meta:
        model = Strategy
        fields = [*STRATEGY_FIELDS, "note"]
        extra_kwargs = {name: {"required": False} for name in [*STRATEGY_FIELDS, "note"]}


class JudgeRunSerializer(serializers.ModelSerializer):
    judge = serializers.PrimaryKeyRelatedField(queryset=Judge.objects.all())
    strategy = serializers.PrimaryKeyRelatedField(
        queryset=Strategy.objects.all(), required=False, allow_null=True
    )
    study = serializers.PrimaryKeyRelatedField(
        queryset=Study.objects.all(), required=False, allow_null=True
    )
    dataset = serializers.PrimaryKeyRelatedField(
        queryset=Dataset.objects.all(), required=False, allow_null=True
    )
    criteria = serializers.PrimaryKeyRelatedField(
        queryset=Criterion.objects.all(), many=True, required=False
    )
    metrics = serializers.PrimaryKeyRelatedField(
        queryset=Metric.objects.all(), many=True, required=False
    )
    kinds = serializers.PrimaryKeyRelatedField(
        queryset=PerturbationKind.objects.all(), many=True, required=False
    )
    item_ids = serializers.ListField(child=serializers.IntegerField(), required=False)
    perturbation_ids = serializers.ListField(child=serializers.IntegerField(), required=False)
    estimated_cost = serializers.DecimalField(
        max_digits=14, decimal_places=6, read_only=True, allow_null=True
    )
    dry_run = serializers.BooleanField(
        write_only=True,
        default=False,
        help_text="LLM judges: answer with the estimate only; nothing is recorded or sent.",
    )
    confirm = serializers.BooleanField(
        write_only=True,
        default=False,
        help_text="LLM judges: start a run whose HTTP requests exceed the study's limit.",
    )

    class Meta:
        model = JudgeRun
        fields = [
            "id",
            "label",
            "judge",
            "strategy",
            "study",
            "dataset",
            "item_ids",
            "perturbation_ids",
            "kinds",
            "criteria",
            "metrics",
            "include_originals",
            "include_perturbations",
            "vetted_only",
            "batch_mode",
            "batch_live_fallback",
            "status",
            "total",
            "done",
            "failed",
            "cached",
            "unscored",
            "http_requests",
            "prompt_tokens",
            "completion_tokens",
            "estimated_cost",
            "dry_run",
            "confirm",
            "problems",
            "error",
            "created_at",
            "started_at",
            "finished_at",
        ]
        read_only_fields = [
            "status",
            "total",
            "done",
            "failed",
            "cached",
            "unscored",
            "http_requests",
            "prompt_tokens",
            "completion_tokens",
            "problems",
            "error",
            "created_at",
            "started_at",
            "finished_at",
        ]


class JudgeCallSerializer(serializers.ModelSerializer):
    class Meta:
        model = JudgeCall
        fields = [
            "id",
            "item",
            "perturbation",
            "criterion",
            "metric",
            "sample_index",
            "original_first",
            "parse_status",
            "parse_reason",
            "score",
            "verdict",
            "preferred",
            "raw_response",
            "request",
            "format_retry",
            "prompt_tokens",
            "completion_tokens",
            "latency",
            "total_seconds",
            "attempts",
            "request_id",
            "system_fingerprint",
            "response_model",
            "finish_reason",
            "cache_key",
            "cached",
            "cached_from",
            "error_kind",
            "error",
            "previous_errors",
            "finished_at",
        ]
        read_only_fields = fields


class RunEstimateSerializer(serializers.Serializer):
    """What starting an LLM judge's run would send (services.run_start.RunEstimate)."""

    calls = serializers.IntegerField()
    cached_calls = serializers.IntegerField(help_text="Answered by the cache: no request.")
    http_calls = serializers.IntegerField()
    prompt_tokens = serializers.IntegerField(help_text="The prompts' characters / 4.")
    completion_tokens = serializers.IntegerField()
    completion_source = serializers.CharField()
    cost = serializers.CharField(allow_null=True, help_text="From the judge's prices, if set.")
    batch_cost = serializers.CharField(
        allow_null=True, help_text="Through the judge's batch interface (its batch price)."
    )
    batch_problem = serializers.CharField(
        help_text="Why it cannot go through a batch interface (empty: it can)."
    )
    limit = serializers.IntegerField(help_text="HTTP requests above which it needs confirm.")
    over_limit = serializers.BooleanField()
    nothing = serializers.CharField(help_text="Why it would measure nothing (empty: it would).")
    left_out = serializers.ListField(child=serializers.DictField())


class ConnectionTestRequestSerializer(serializers.Serializer):
    """An endpoint as it would be saved, and the strategy whose sample prompt to send."""

    base_url = serializers.CharField()
    model = serializers.CharField()
    api_key_env = serializers.CharField(required=False, allow_blank=True)
    default_params = serializers.JSONField(required=False)
    timeout_s = serializers.FloatField(required=False)
    max_tokens_param = serializers.CharField(required=False)
    strategy = serializers.PrimaryKeyRelatedField(
        queryset=Strategy.objects.all(), required=False, help_text="Default: fbi-single-vanilla."
    )


class ConnectionTestSerializer(serializers.Serializer):
    """What the one test call did (services.connection_test.ConnectionTest)."""

    ok = serializers.BooleanField()
    messages = serializers.ListField(child=serializers.DictField())
    reply = serializers.CharField(allow_null=True)
    parse_status = serializers.CharField()
    score = serializers.FloatField(allow_null=True)
    verdict = serializers.CharField(allow_null=True)
    parse_reason = serializers.CharField()
    latency_s = serializers.FloatField(allow_null=True)
    model = serializers.CharField(allow_null=True)
    prompt_tokens = serializers.IntegerField(allow_null=True)
    completion_tokens = serializers.IntegerField(allow_null=True)
    error_kind = serializers.CharField(allow_null=True)
    error = serializers.CharField(allow_null=True)
    status_code = serializers.IntegerField(allow_null=True)
