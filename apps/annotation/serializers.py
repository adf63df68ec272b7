"""API shapes of studies and their members, and what every kind of work's shapes share (each
kind declares its own in its page module, apps/annotation/views/<kind>.py). Validation only:
the services decide."""

from typing import Any

from rest_framework import serializers

from apps.accounts.models import Role
from apps.annotation.models import (
    ACTIVE_HELP,
    MOST_ACTIVE_SECONDS,
    Study,
    StudyMembership,
)
from apps.annotation.services.studies import CONTROL_FIELDS, SETTINGS_FIELDS, SETUP_FIELDS
from apps.catalog.models import Criterion, PerturbationKind
from apps.corpus.models import Dataset
from apps.corpus.selectors import datasets_attachable


class MembershipSerializer(serializers.ModelSerializer):
    user = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = StudyMembership
        fields = ["user", "role"]


class MemberSerializer(serializers.ModelSerializer):
    """A member with the judgements they made in the study (see selectors.study_members)."""

    username = serializers.CharField(source="user.username", read_only=True)
    invited = serializers.SerializerMethodField(help_text="Has not used the invitation yet.")
    vettings = serializers.IntegerField(read_only=True)
    comparisons = serializers.IntegerField(read_only=True)
    votes = serializers.IntegerField(read_only=True)

    class Meta:
        model = StudyMembership
        fields = ["id", "username", "role", "invited", "vettings", "comparisons", "votes"]

    def get_invited(self, membership: StudyMembership) -> bool:
        return not membership.user.has_usable_password()


class MemberAddSerializer(serializers.Serializer):
    """Either `username` (an existing account), or `usernames` to create new accounts."""

    username = serializers.CharField(required=False, max_length=150)
    usernames = serializers.ListField(
        child=serializers.CharField(max_length=150), required=False, allow_empty=False
    )
    role = serializers.ChoiceField(choices=Role.choices, default=Role.ANNOTATOR)
    access = serializers.ChoiceField(
        choices=["link", "password"],
        default="link",
        help_text="New accounts: one-time invitation links, or generated passwords.",
    )

    def validate(self, attrs):
        if ("username" in attrs) == ("usernames" in attrs):
            raise serializers.ValidationError("Give either username or usernames.")
        return attrs


class MemberRoleSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=Role.choices)


class NewAccountSerializer(serializers.Serializer):
    username = serializers.CharField()
    role = serializers.CharField()
    password = serializers.CharField(help_text="Generated password, shown this once.")
    invitation = serializers.CharField(help_text="One-time link to set a password.")


#: What the study's state says (read only): archived, its plan built, queued, or not met.
STATE = ["archived_at", "plan_built_at", "plan_queued_at", "plan_problem", "created_at"]


class CriteriaByKey(serializers.ModelSerializer):
    """A study's criteria (every many-to-many to `Criterion`, a kind's own included) by key."""

    def build_relational_field(self, field_name: str, relation_info: Any) -> Any:
        field_class, kwargs = super().build_relational_field(field_name, relation_info)
        if relation_info.related_model is Criterion:
            return serializers.SlugRelatedField, {**kwargs, "slug_field": "key"}
        return field_class, kwargs


class StudySerializer(CriteriaByKey):
    owner = serializers.SlugRelatedField(slug_field="username", read_only=True)
    datasets = serializers.SlugRelatedField(slug_field="name", many=True, read_only=True)
    kinds = serializers.SlugRelatedField(slug_field="slug", many=True, read_only=True)
    members = MembershipSerializer(source="memberships", many=True, read_only=True)

    class Meta:
        model = Study
        fields = ["id", "slug", "owner", "members", *SETUP_FIELDS, *CONTROL_FIELDS, *STATE]
        read_only_fields = STATE


class StudyWriteSerializer(CriteriaByKey):
    """Create or change a study: datasets by name (yours), kinds by slug, criteria by key."""

    datasets = serializers.SlugRelatedField(
        slug_field="name", many=True, required=False, queryset=Dataset.objects.none()
    )
    kinds = serializers.SlugRelatedField(
        slug_field="slug", many=True, required=False, queryset=PerturbationKind.objects.all()
    )
    archived = serializers.BooleanField(required=False, help_text="Archive or bring back.")

    class Meta:
        model = Study
        fields = [*SETUP_FIELDS, *CONTROL_FIELDS, "archived"]

    def __init__(self, *args, user=None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if user is not None:
            datasets: Any = self.fields["datasets"]
            datasets.child_relation.queryset = datasets_attachable(user, self.instance)


class StudySettingsSerializer(serializers.ModelSerializer):
    class Meta:
        model = Study
        fields = [*SETTINGS_FIELDS, *CONTROL_FIELDS]


class PlanSummarySerializer(serializers.Serializer):
    perturbations = serializers.IntegerField()
    vetting_slots = serializers.IntegerField()
    comparison_slots = serializers.IntegerField()
    assessment_slots = serializers.IntegerField()
    criterion_assignments = serializers.IntegerField()
    problem = serializers.CharField(help_text="Why the criteria design could not be built.")


# --- what kinds of work share ----------------------------------------------------------------


class KindBriefSerializer(serializers.Serializer):
    slug = serializers.CharField()
    name = serializers.CharField()
    description = serializers.CharField()
    target_aspect = serializers.CharField(source="target_aspect.slug", default=None)


class AnswerSerializer(serializers.Serializer):
    """What every submit carries besides its answer (docs/api.md)."""

    idempotency_key = serializers.UUIDField()
    based_on = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=0,
        help_text="The answer's version you saw (0: none yet); an answer changed since is a "
        "409 and nothing is saved.",
    )
    active_seconds = serializers.FloatField(
        required=False,
        allow_null=True,
        min_value=0,
        max_value=MOST_ACTIVE_SECONDS,
        help_text=ACTIVE_HELP,
    )


class AssessmentUnitSerializer(serializers.Serializer):
    """A unit by its number (a rated text, a tuple of texts)."""

    unit = serializers.IntegerField()


class VettingUnitSerializer(serializers.Serializer):
    """A unit by its perturbation (vetting, gold validation)."""

    perturbation = serializers.IntegerField()
