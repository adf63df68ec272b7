"""A study's control items through the API (its researchers only): list, add one, import a
CSV or JSONL file, remove one (docs/api.md, "Control items"). Accuracy is in the study's
progress (`GET studies/{id}/progress/`, `controls`)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.annotation.api.work import valid
from apps.annotation.models import ControlItem
from apps.annotation.permissions import STUDY_RESEARCHERS, study_access
from apps.annotation.selectors.controls import control_items
from apps.annotation.services.controls import (
    control_add,
    control_remove,
    control_rows,
    controls_import,
)


class ControlSerializer(serializers.ModelSerializer):
    """A control item with its known answer, and how often it was served and answered."""

    perturbation = serializers.SerializerMethodField()
    item = serializers.SerializerMethodField()
    criterion = serializers.SerializerMethodField()
    answer = serializers.CharField(read_only=True)
    served = serializers.IntegerField(read_only=True, default=0)
    answered = serializers.IntegerField(read_only=True, default=0)

    class Meta:
        model = ControlItem
        fields = [
            "id",
            "work",
            "perturbation",
            "item",
            "criterion",
            "expected",
            "expected_score",
            "tolerance",
            "answer",
            "served",
            "answered",
            "created_at",
        ]

    def get_perturbation(self, control: ControlItem) -> int | None:
        return control.unit.perturbation_id if control.unit else control.perturbation_id

    def get_item(self, control: ControlItem) -> int | None:
        return control.unit.item_id if control.unit else None

    def get_criterion(self, control: ControlItem) -> str | None:
        criterion = control.unit.criterion if control.unit else control.criterion
        return criterion.key if criterion else None


class ControlInSerializer(serializers.Serializer):
    work = serializers.ChoiceField(choices=ControlItem.Work.choices)
    perturbation = serializers.IntegerField(required=False, allow_null=True)
    item = serializers.IntegerField(required=False, allow_null=True)
    criterion = serializers.CharField(required=False, allow_blank=True, max_length=120)
    answer = serializers.CharField(
        max_length=16,
        help_text="Vetting: a verdict; comparison: worse, same or better (the perturbed text "
        "against the original); direct assessment: the rating.",
    )
    tolerance = serializers.IntegerField(required=False, min_value=0, default=0)


class ControlImportSerializer(serializers.Serializer):
    file = serializers.FileField(help_text="CSV with a header, or JSONL (.jsonl).")


def _added(call):
    try:
        return call()
    except ValueError as exc:
        raise ValidationError({"detail": str(exc)}) from exc


class ControlListView(APIView):
    permission_classes = [STUDY_RESEARCHERS]

    @extend_schema(responses=ControlSerializer(many=True))
    def get(self, request: Request, pk: int) -> Response:
        """The study's control items."""
        study = study_access(request, pk).study
        return Response(ControlSerializer(control_items(study), many=True).data)

    @extend_schema(request=ControlInSerializer, responses={201: ControlSerializer})
    def post(self, request: Request, pk: int) -> Response:
        """Add a control item (400 naming what is wrong; nothing saved)."""
        study = study_access(request, pk).study
        data = valid(ControlInSerializer, request)
        control = _added(lambda: control_add(study=study, **data))
        return Response(ControlSerializer(control).data, status=status.HTTP_201_CREATED)


class ControlImportView(APIView):
    permission_classes = [STUDY_RESEARCHERS]
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        request={"multipart/form-data": ControlImportSerializer},
        responses={201: ControlSerializer(many=True)},
    )
    def post(self, request: Request, pk: int) -> Response:
        """Add every row of a CSV or JSONL file as a control item, or none (400 names the
        first bad row)."""
        study = study_access(request, pk).study
        upload = valid(ControlImportSerializer, request)["file"]
        rows = _added(lambda: control_rows(upload.name, upload.read()))
        added = _added(lambda: controls_import(study=study, rows=rows))
        return Response(ControlSerializer(added, many=True).data, status=status.HTTP_201_CREATED)


class ControlDetailView(APIView):
    permission_classes = [STUDY_RESEARCHERS]

    @extend_schema(responses={204: OpenApiResponse(description="Removed.")})
    def delete(self, request: Request, pk: int, control_pk: int) -> Response:
        """Remove a control item, with the answers given to it (they were never data)."""
        study = study_access(request, pk).study
        try:
            control_remove(study=study, control_id=control_pk)
        except ValueError as exc:
            raise NotFound(str(exc)) from exc
        return Response(status=status.HTTP_204_NO_CONTENT)
