"""API shapes of studies, work items and judgements. Validation only: the services decide."""

from typing import Any

from rest_framework import serializers

from apps.accounts.models import Role
from apps.annotation.models import (
    ACTIVE_HELP,
    MOST_ACTIVE_SECONDS,
    Assessment,
    Choice,
    Comparison,
    ExpertVote,
    GoldCheck,
    Study,
    StudyMembership,
    Verdict,
    Vetting,
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


# --- judgements in ---------------------------------------------------------------------------


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


class VettingInSerializer(AnswerSerializer):
    perturbation = serializers.IntegerField()
    verdict = serializers.ChoiceField(choices=Verdict.choices)
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=5000)


class ComparisonInSerializer(AnswerSerializer):
    perturbation = serializers.IntegerField()
    criterion = serializers.IntegerField()
    choice = serializers.ChoiceField(choices=Choice.choices)
    original_first = serializers.BooleanField(
        required=False, allow_null=True, default=None, help_text="The order shown."
    )


class AssessmentInSerializer(AnswerSerializer):
    unit = serializers.IntegerField()
    score = serializers.IntegerField(help_text="On the criterion's scale.")


class GoldCheckInSerializer(AnswerSerializer):
    perturbation = serializers.IntegerField()
    good = serializers.BooleanField(help_text="True: good; false: not good.")


class AssessmentUnitSerializer(serializers.Serializer):
    unit = serializers.IntegerField()


class ExpertVoteInSerializer(AnswerSerializer):
    kind = serializers.IntegerField()
    metric = serializers.IntegerField()


class VettingUnitSerializer(serializers.Serializer):
    perturbation = serializers.IntegerField()


class ComparisonUnitSerializer(serializers.Serializer):
    perturbation = serializers.IntegerField()
    criterion = serializers.IntegerField()


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


class GoldCheckSerializer(serializers.ModelSerializer):
    annotator = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = GoldCheck
        fields = ["id", "study", "perturbation", "annotator", "good", "created_at", "updated_at"]
