from rest_framework import serializers

from apps.catalog.models import Aspect, Criterion, Metric, PerturbationKind, Task


class MetricSerializer(serializers.ModelSerializer):
    class Meta:
        model = Metric
        fields = ["slug", "name", "definition"]


class TaskSerializer(serializers.ModelSerializer):
    metrics = MetricSerializer(many=True, read_only=True)

    class Meta:
        model = Task
        fields = ["id", "slug", "name", "text_name", "description", "metrics"]


class AspectSerializer(serializers.ModelSerializer):
    parent = serializers.SlugRelatedField(slug_field="slug", read_only=True)

    class Meta:
        model = Aspect
        fields = ["id", "slug", "name", "parent", "definition"]


class CriterionSerializer(serializers.ModelSerializer):
    aspect = serializers.SlugRelatedField(slug_field="slug", read_only=True)

    class Meta:
        model = Criterion
        fields = [
            "id",
            "key",
            "aspect",
            "description_type",
            "text",
            "scale_min",
            "scale_max",
            "source",
        ]


class PerturbationKindSerializer(serializers.ModelSerializer):
    target_aspect = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    task = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    expected_impact = serializers.SerializerMethodField()

    class Meta:
        model = PerturbationKind
        fields = [
            "id",
            "slug",
            "name",
            "family",
            "level",
            "method",
            "degree",
            "target_aspect",
            "expected_impact",
            "task",
            "ability",
            "score_invariant",
            "description",
            "quality_issue",
            "rule",
            "parameters",
            "source",
        ]

    def get_expected_impact(self, kind: PerturbationKind) -> list[str]:
        lineage = self.context.get("lineage", {})
        if kind.target_aspect_id is None or kind.score_invariant:
            return []
        return lineage.get(kind.target_aspect_id) or [a.slug for a in kind.expected_impact()]
