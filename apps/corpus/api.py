"""Corpus API: datasets, items, perturbations, imports and exports, scoped to the user."""

from django.core.exceptions import ValidationError
from django.http import StreamingHttpResponse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError as ApiValidationError
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response

from apps.accounts.permissions import IsAuthenticated, IsOwnerOrReadOnly, IsResearcher, ReadOnly
from apps.corpus import selectors
from apps.corpus.exporting import export_csv, export_jsonl
from apps.corpus.generation.estimate import (
    calls_a_model,
    generation_job_confirm,
    generation_job_estimate,
)
from apps.corpus.generation.jobs import generation_job_start
from apps.corpus.models import Dataset, GenerationJob, ImportJob, Perturbation, SourceItem
from apps.corpus.serializers import (
    DatasetSerializer,
    GenerationEstimateSerializer,
    GenerationJobSerializer,
    ImportJobSerializer,
    ImportRequestSerializer,
    PerturbationSerializer,
    PublisherValidatedSerializer,
    SourceItemSerializer,
)
from apps.corpus.services import dataset_mark_validated, import_job_start
from apps.endpoints.spending import estimated_start

EXPORTS = {"jsonl": (export_jsonl, "application/x-ndjson"), "csv": (export_csv, "text/csv")}


class DatasetViewSet(viewsets.ReadOnlyModelViewSet):
    """Datasets the user may see; only their owner changes one."""

    queryset = Dataset.objects.none()  # for the schema; get_queryset scopes it
    serializer_class = DatasetSerializer
    permission_classes = [IsAuthenticated & IsOwnerOrReadOnly]
    owned = staticmethod(selectors.datasets_owned_by)

    def get_queryset(self):
        datasets = selectors.with_item_counts(selectors.datasets_for_user(self.request.user))
        return datasets.select_related("task")

    @extend_schema(
        parameters=[OpenApiParameter("file_format", enum=list(EXPORTS))],
        responses={(200, "application/x-ndjson"): bytes, (200, "text/csv"): bytes},
    )
    @action(detail=True, methods=["get"])
    def export(self, request, pk=None):
        """Download the dataset's items and perturbations (JSONL by default, or CSV)."""
        dataset = self.get_object()
        file_format = request.query_params.get("file_format", "jsonl")
        if file_format not in EXPORTS:
            return Response(
                {"file_format": f"use one of {', '.join(EXPORTS)}"},
                status=status.HTTP_400_BAD_REQUEST,
            )
        return export_response(dataset, file_format)

    @extend_schema(request=PublisherValidatedSerializer, responses=DatasetSerializer)
    @action(detail=True, methods=["post"], url_path="publisher-validated")
    def publisher_validated(self, request, pk=None):
        """Mark the dataset's perturbations as already validated by their publisher (or not):
        judge runs on vetted perturbations then take them without re-vetting."""
        form = PublisherValidatedSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        dataset = dataset_mark_validated(
            dataset=self.get_object(), validated=form.validated_data["publisher_validated"]
        )
        return Response({"id": dataset.pk, "publisher_validated": dataset.publisher_validated})


def export_response(dataset, file_format: str) -> StreamingHttpResponse:
    writer, content_type = EXPORTS[file_format]
    response = StreamingHttpResponse(writer(dataset), content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="dataset-{dataset.pk}.{file_format}"'
    return response


class SourceItemViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = SourceItem.objects.none()  # for the schema; get_queryset scopes it
    serializer_class = SourceItemSerializer
    permission_classes = [IsAuthenticated]

    def get_queryset(self):
        qs = selectors.items_for_user(self.request.user).select_related("task", "dataset")
        if dataset := self.request.query_params.get("dataset"):
            qs = qs.filter(dataset_id=dataset)
        return qs


class PerturbationViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = Perturbation.objects.none()  # for the schema; get_queryset scopes it
    serializer_class = PerturbationSerializer
    permission_classes = [IsAuthenticated]

    def get_queryset(self):
        qs = (
            selectors.perturbations_for_user(self.request.user)
            .select_related("kind")
            .prefetch_related("versions__author")
        )
        if dataset := self.request.query_params.get("dataset"):
            qs = qs.filter(item__dataset_id=dataset)
        if kind := self.request.query_params.get("kind"):
            qs = qs.filter(kind__slug=kind)
        return qs


class ImportJobViewSet(mixins.CreateModelMixin, viewsets.ReadOnlyModelViewSet):
    """Upload a file to import; small files finish in the response, big ones in the worker."""

    queryset = ImportJob.objects.none()  # for the schema; get_queryset scopes it

    serializer_class = ImportJobSerializer
    permission_classes = [ReadOnly | IsResearcher]
    parser_classes = [MultiPartParser, FormParser]

    def get_queryset(self):
        return selectors.import_jobs_for_user(self.request.user)

    @extend_schema(request=ImportRequestSerializer, responses=ImportJobSerializer)
    def create(self, request, *args, **kwargs):
        form = ImportRequestSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        job = import_job_start(
            upload=form.validated_data["file"],
            dataset_name=form.validated_data["dataset"],
            file_format=form.validated_data.get("format") or "",
            task=form.validated_data.get("task", ""),
            user=request.user,
            repeats=form.validated_data["repeats"],
        )
        code = status.HTTP_201_CREATED if job.status != job.Status.FAILED else 400
        return Response(ImportJobSerializer(job).data, status=code)


class GenerationJobViewSet(mixins.CreateModelMixin, viewsets.ReadOnlyModelViewSet):
    """Generate perturbations in the worker (LLM-written ones after their estimate); poll the
    job for progress."""

    queryset = GenerationJob.objects.none()  # for the schema; get_queryset scopes it

    serializer_class = GenerationJobSerializer
    permission_classes = [ReadOnly | IsResearcher]

    def get_queryset(self):
        return selectors.generation_jobs_for_user(self.request.user).prefetch_related("kinds")

    def get_serializer_context(self):
        user = self.request.user
        return {**super().get_serializer_context(), "datasets": selectors.datasets_owned_by(user)}

    def create(self, request, *args, **kwargs):
        """Record and start a generation. One that calls a model (LLM-written kinds) is
        estimated first: ``dry_run`` answers with the estimate alone (200, nothing recorded),
        and a job above the limit without ``confirm`` is refused (400, with the estimate;
        nothing recorded)."""
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        dry_run, confirmed = (
            serializer.validated_data["dry_run"],
            serializer.validated_data["confirm"],
        )
        options = serializer.job_options()
        if not calls_a_model(options["kinds"], options.get("generator")):
            job = generation_job_start(user=request.user, **options)
            return Response(self.get_serializer(job).data, status=status.HTTP_201_CREATED)
        return estimated_start(
            record=lambda: generation_job_start(user=request.user, start=False, **options),
            estimate=lambda job: (
                GenerationEstimateSerializer(generation_job_estimate(job).as_dict()).data
            ),
            start=lambda job: generation_job_confirm(job=job, confirmed=confirmed),
            answer=lambda job: self.get_serializer(job).data,
            dry_run=dry_run,
        )

    @extend_schema(responses=GenerationEstimateSerializer)
    @action(detail=True, methods=["get"])
    def estimate(self, request, pk=None):
        """What starting this (not started) job would send: calls, requests, tokens."""
        estimate = generation_job_estimate(self.get_object())
        return Response(GenerationEstimateSerializer(estimate.as_dict()).data)

    @extend_schema(request=None)
    @action(detail=True, methods=["post"])
    def start(self, request, pk=None):
        """Start a job recorded on the page after its estimate (confirm=true above the
        limit)."""
        confirmed = str(request.data.get("confirm", "")).lower() in ("1", "true")
        try:
            job = generation_job_confirm(job=self.get_object(), confirmed=confirmed)
        except ValidationError as error:
            raise ApiValidationError(error.message_dict) from error
        return Response(self.get_serializer(job).data)
