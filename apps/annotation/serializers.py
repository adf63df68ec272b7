"""API shapes of studies, work items and judgements. Validation only: the services decide."""

from rest_framework import serializers

from apps.annotation.models import (
    Choice,
    Comparison,
    ExpertVote,
    Study,
    StudyMembership,
    Verdict,
    Vetting,
)


class MembershipSerializer(serializers.ModelSerializer):
    user = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = StudyMembership
        fields = ["user", "role"]


class StudySerializer(serializers.ModelSerializer):
    owner = serializers.SlugRelatedField(slug_field="username", read_only=True)
    datasets = serializers.SlugRelatedField(slug_field="name", many=True, read_only=True)
    kinds = serializers.SlugRelatedField(slug_field="slug", many=True, read_only=True)
    criteria = serializers.SlugRelatedField(slug_field="key", many=True, read_only=True)
    members = MembershipSerializer(source="memberships", many=True, read_only=True)

    class Meta:
        model = Study
        fields = [
            "id",
            "slug",
            "name",
            "description",
            "guidelines",
            "owner",
            "datasets",
            "kinds",
            "criteria",
            "members",
            "vetting_overlap",
            "comparison_groups",
            "comparisons_need_vetting",
            "lease_minutes",
            "plan_built_at",
            "plan_queued_at",
            "plan_problem",
            "created_at",
        ]
        read_only_fields = ["plan_built_at", "plan_queued_at", "plan_problem", "created_at"]


class StudySettingsSerializer(serializers.ModelSerializer):
    class Meta:
        model = Study
        fields = [
            "vetting_overlap",
            "comparison_groups",
            "comparisons_need_vetting",
            "lease_minutes",
            "guidelines",
        ]


class PlanSummarySerializer(serializers.Serializer):
    perturbations = serializers.IntegerField()
    vetting_slots = serializers.IntegerField()
    criterion_assignments = serializers.IntegerField()
    comparison_slots = serializers.IntegerField()
    problem = serializers.CharField(help_text="Why the criteria design could not be built.")


# --- work handed out -------------------------------------------------------------------------


class KindBriefSerializer(serializers.Serializer):
    slug = serializers.CharField()
    name = serializers.CharField()
    description = serializers.CharField()
    target_aspect = serializers.CharField(source="target_aspect.slug", default=None)


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


class ComparisonItemSerializer(serializers.Serializer):
    """One pair x criterion; `first` and `second` in the recorded order."""

    perturbation = serializers.IntegerField(source="perturbation.pk")
    criterion = serializers.IntegerField(source="criterion.pk")
    criterion_text = serializers.CharField()
    source = serializers.CharField(source="perturbation.item.source")
    first = serializers.CharField(source="first_text")
    second = serializers.CharField(source="second_text")
    original_first = serializers.BooleanField()


# --- judgements in ---------------------------------------------------------------------------


class VettingInSerializer(serializers.Serializer):
    perturbation = serializers.IntegerField()
    verdict = serializers.ChoiceField(choices=Verdict.choices)
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=5000)
    idempotency_key = serializers.UUIDField()


class ComparisonInSerializer(serializers.Serializer):
    perturbation = serializers.IntegerField()
    criterion = serializers.IntegerField()
    choice = serializers.ChoiceField(choices=Choice.choices)
    original_first = serializers.BooleanField(
        required=False, allow_null=True, default=None, help_text="The order shown."
    )
    idempotency_key = serializers.UUIDField()


class ExpertVoteInSerializer(serializers.Serializer):
    kind = serializers.IntegerField()
    metric = serializers.IntegerField()
    idempotency_key = serializers.UUIDField()


class SkipSerializer(serializers.Serializer):
    perturbation = serializers.IntegerField()
    criterion = serializers.IntegerField(required=False, help_text="For a comparison skip.")


class EditSerializer(serializers.Serializer):
    text = serializers.CharField(trim_whitespace=False, max_length=1_000_000)
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000)


# --- judgements out --------------------------------------------------------------------------


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


class ExpertVoteSerializer(serializers.ModelSerializer):
    expert = serializers.SlugRelatedField(slug_field="username", read_only=True)
    task = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    kind = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    metric = serializers.SlugRelatedField(slug_field="slug", read_only=True)

    class Meta:
        model = ExpertVote
        fields = ["id", "study", "expert", "task", "kind", "metric", "created_at", "updated_at"]
