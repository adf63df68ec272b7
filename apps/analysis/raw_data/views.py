"""Raw data downloads, from the study page and the API (token or session)."""

from __future__ import annotations

from django.http import Http404, StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.views import APIView

from apps.accounts.permissions import allow
from apps.accounts.requests import AuthedRequest
from apps.analysis.permissions import READS_RAW_DATA
from apps.analysis.raw_data import FORMATS, raw_data_lines, tables
from apps.annotation.permissions import study_access


def _download(request, pk: int, table: str, file_format: str) -> StreamingHttpResponse:
    """Researchers of the study only: 404 for outsiders, 403 for annotators and experts."""
    study = study_access(request, pk).study
    if table not in tables() or file_format not in FORMATS:
        raise Http404(f"Tables: {', '.join(tables())}; formats: {', '.join(FORMATS)}.")
    response = StreamingHttpResponse(
        raw_data_lines(study, table, file_format), content_type=FORMATS[file_format]
    )
    filename = f"{study.slug}-{table}.{file_format}"
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@allow(READS_RAW_DATA)
def raw_data_download(
    request: AuthedRequest, pk: int, table: str, file_format: str
) -> StreamingHttpResponse:
    return _download(request, pk, table, file_format)


class RawDataView(APIView):
    """A study's raw data: one row per human judgement or judge call (docs/api.md)."""

    permission_classes = [READS_RAW_DATA]

    @extend_schema(
        parameters=[
            OpenApiParameter("table", str, OpenApiParameter.PATH, enum=list(tables())),
            OpenApiParameter("file_format", str, OpenApiParameter.PATH, enum=list(FORMATS)),
        ],
        responses={
            (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="CSV, a header row"),
            (200, "application/x-ndjson"): OpenApiResponse(
                OpenApiTypes.STR, description="One JSON object a line"
            ),
        },
    )
    def get(self, request: Request, pk: int, table: str, file_format: str):
        return _download(request, pk, table, file_format)
