"""Studies API: a user sees only the studies they own or belong to."""

from rest_framework import serializers, viewsets

from apps.annotation.models import Study, StudyMembership


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
            "created_at",
        ]


class StudyViewSet(viewsets.ReadOnlyModelViewSet):
    serializer_class = StudySerializer

    def get_queryset(self):
        return (
            Study.objects.for_user(self.request.user)
            .select_related("owner")
            .prefetch_related("datasets", "kinds", "criteria", "memberships__user")
        )
