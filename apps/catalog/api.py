"""Read-only API over the catalog: every logged-in user may read it."""

from drf_spectacular.utils import extend_schema
from rest_framework import viewsets
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.accounts.permissions import IsAuthenticated, IsResearcher
from apps.catalog.criteria_import import criteria_import_upload
from apps.catalog.models import Aspect, Criterion, PerturbationKind, Task
from apps.catalog.serializers import (
    AspectSerializer,
    CriterionSerializer,
    PerturbationKindSerializer,
    TaskSerializer,
)
from apps.catalog.tree import lineage_slugs
from apps.inputs.problems import ImportFailed


class TaskViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = Task.objects.prefetch_related("metrics")
    serializer_class = TaskSerializer
    permission_classes = [IsAuthenticated]
    lookup_field = "slug"


class AspectViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = Aspect.objects.select_related("parent")
    serializer_class = AspectSerializer
    permission_classes = [IsAuthenticated]
    lookup_field = "slug"


class CriterionViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = Criterion.objects.select_related("aspect")
    serializer_class = CriterionSerializer
    permission_classes = [IsAuthenticated]

    def get_queryset(self):
        qs = super().get_queryset()
        for param, field in (
            ("aspect", "aspect__slug"),
            ("description_type", "description_type"),
            ("source", "source"),
        ):
            if value := self.request.query_params.get(param):
                qs = qs.filter(**{field: value})
        return qs


class PerturbationKindViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = PerturbationKind.objects.select_related("target_aspect", "task")
    serializer_class = PerturbationKindSerializer
    permission_classes = [IsAuthenticated]
    lookup_field = "slug"

    def get_queryset(self):
        qs = super().get_queryset()
        for param in ("family", "level", "method", "ability"):
            if value := self.request.query_params.get(param):
                qs = qs.filter(**{param: value})
        return qs

    def get_serializer_context(self):
        return {**super().get_serializer_context(), "lineage": lineage_slugs()}


class CriteriaImportView(APIView):
    """Import a criteria file (aspect → {label → text}); all or nothing."""

    permission_classes = [IsResearcher]
    parser_classes = [MultiPartParser]

    @extend_schema(
        request={
            "multipart/form-data": {
                "type": "object",
                "properties": {
                    "file": {"type": "string", "format": "binary"},
                    "source": {"type": "string"},
                },
            }
        },
        responses={201: dict, 400: dict},
    )
    def post(self, request):
        upload = request.data.get("file")
        if upload is None:
            return Response({"errors": ["file: this field is required"]}, status=400)
        try:
            summary = criteria_import_upload(upload=upload, source=request.data.get("source", ""))
        except ImportFailed as exc:
            return Response({"errors": exc.as_strings()}, status=400)
        return Response({"created": summary.created, "existing": summary.existing}, status=201)
