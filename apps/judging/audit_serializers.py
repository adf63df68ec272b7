"""Judge audit API shapes (docs/audit.md); the checks that span fields stay in the service."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from apps.accounts.permissions import owned_by
from apps.annotation.models import Study
from apps.corpus.models import Dataset
from apps.corpus.selectors import datasets_for_user
from apps.corpus.serializers import EndpointNameField
from apps.endpoints.models import Endpoint
from apps.endpoints.selectors import endpoints_for_user
from apps.judging.models import AuditPart, AuditSubject, Judge, JudgeAudit
from apps.judging.search_serializers import ChoiceSerializer
from apps.judging.selectors import judges_for_user


class AuditCreateSerializer(serializers.Serializer):
    """What to audit: judges (each with its strategy) on a study or a dataset."""

    study = serializers.PrimaryKeyRelatedField(
        queryset=Study.objects.none(), required=False, allow_null=True, default=None
    )
    dataset = serializers.PrimaryKeyRelatedField(
        queryset=Dataset.objects.none(), required=False, allow_null=True, default=None
    )
    subjects = ChoiceSerializer(many=True)
    search_budget = serializers.IntegerField(default=20, min_value=2, max_value=1000)
    generator = EndpointNameField(
        slug_field="name",
        queryset=Endpoint.objects.none(),
        required=False,
        allow_null=True,
        default=None,
        help_text="The adversarial search's generator (an endpoint's name); none: skipped.",
    )
    gold_judge = serializers.PrimaryKeyRelatedField(
        queryset=Judge.objects.none(), required=False, allow_null=True, default=None
    )
    label = serializers.CharField(  # type: ignore[assignment]  # a field, not Field.label
        max_length=200, required=False, default="", allow_blank=True
    )
    vetted_only = serializers.BooleanField(
        required=False,
        allow_null=True,
        default=None,
        help_text="A study's audit: only perturbations vetted in the study (null: the "
        "study's default; false: every perturbation of its kinds).",
    )
    start = serializers.BooleanField(
        default=False, help_text="Start at once; otherwise read the estimate, then start."
    )
    confirm = serializers.BooleanField(
        default=False,
        help_text="With start: start it even though its HTTP requests exceed the study's limit.",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        request = self.context.get("request")
        if request is None:  # the schema generator
            return
        user = request.user
        fields: Any = self.fields
        fields["study"].queryset = owned_by(Study.objects.all(), user)
        fields["dataset"].queryset = datasets_for_user(user)
        fields["generator"].queryset = endpoints_for_user(user)
        fields["gold_judge"].queryset = judges_for_user(user)
        fields["subjects"].child.limit_to(user)


class AuditPartSerializer(serializers.ModelSerializer):
    progress = serializers.SerializerMethodField()

    class Meta:
        model = AuditPart
        fields = ["id", "part", "run", "baseline", "search", "skipped_reason", "progress"]
        read_only_fields = fields

    @extend_schema_field({"type": "object", "additionalProperties": {"type": "integer"}})
    def get_progress(self, part: AuditPart) -> dict[str, int]:
        return part.progress()


class AuditSubjectSerializer(serializers.ModelSerializer):
    parts = AuditPartSerializer(many=True, read_only=True)

    class Meta:
        model = AuditSubject
        fields = ["id", "judge", "strategy", "label", "parts"]
        read_only_fields = fields


class AuditSerializer(serializers.ModelSerializer):
    subjects = AuditSubjectSerializer(many=True, read_only=True)
    progress = serializers.SerializerMethodField()
    generator: serializers.SlugRelatedField = serializers.SlugRelatedField(
        slug_field="name", read_only=True
    )

    class Meta:
        model = JudgeAudit
        fields = [
            "id",
            "label",
            "study",
            "dataset",
            "status",
            "error",
            "search_budget",
            "generator",
            "gold_judge",
            "estimate",
            "progress",
            "subjects",
            "created_at",
            "started_at",
            "finished_at",
        ]
        read_only_fields = fields

    @extend_schema_field({"type": "object", "additionalProperties": {"type": "integer"}})
    def get_progress(self, audit: JudgeAudit) -> dict[str, int]:
        return audit.progress()
