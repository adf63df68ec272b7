"""Reports as JSON through the API: GET /api/v1/studies/{id}/reports/{name}/[?run=ID]."""

from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.accounts.permissions import IsResearcher
from apps.analysis.permissions import READS_AUDIT_CARDS, READS_REPORTS
from apps.analysis.ratings_import import ratings_import_upload
from apps.analysis.reports import RUN_REPORTS, STUDY_REPORTS
from apps.analysis.selectors import audit_readable, report_run
from apps.analysis.services import report_get
from apps.annotation.permissions import study_access
from apps.corpus.selectors import datasets_owned_by
from apps.inputs.problems import ImportFailed


class ReportView(APIView):
    permission_classes = [READS_REPORTS]

    @extend_schema(
        parameters=[OpenApiParameter("run", int, required=False)],
        responses={200: dict, 202: dict, 409: dict},
    )
    def get(self, request, pk: int, name: str):
        """The report as JSON; 202 while the worker builds it, 409 with the reason if it
        could not be built."""
        study = study_access(request, pk).study
        if name not in STUDY_REPORTS and name not in RUN_REPORTS:
            return Response({"detail": f"no report '{name}'"}, status=404)
        run = report_run(study, request.query_params.get("run"))
        if (name in RUN_REPORTS) != (run is not None):
            return Response({"detail": "judge-reliability needs ?run=<id>"}, status=400)
        snapshot = report_get(study=study, name=name, run=run)
        if snapshot.status == "building":
            return Response({"status": "building", "error": ""}, status=202)
        if snapshot.status == "failed":
            detail = f"the report could not be built: {snapshot.error}"
            return Response({"status": "failed", "error": snapshot.error, "detail": detail}, 409)
        return Response(snapshot.payload)


class RatingsImportView(APIView):
    """Import per-annotator ratings into a dataset (multipart `file`, optional `scale_min`,
    `scale_max`, `source`); all or nothing, errors name the row and field."""

    permission_classes = [IsResearcher]
    parser_classes = [MultiPartParser]

    @extend_schema(
        request={
            "multipart/form-data": {
                "type": "object",
                "properties": {
                    "file": {"type": "string", "format": "binary"},
                    "scale_min": {"type": "number"},
                    "scale_max": {"type": "number"},
                    "source": {"type": "string"},
                },
            }
        },
        responses={201: dict, 400: dict},
    )
    def post(self, request, pk: int):
        dataset = get_object_or_404(datasets_owned_by(request.user), pk=pk)
        upload = request.data.get("file")
        if upload is None:
            return Response({"errors": ["file: this field is required"]}, status=400)
        try:
            scale = _scale(request.data)
            summary = ratings_import_upload(
                upload=upload, dataset=dataset, scale=scale, source=request.data.get("source", "")
            )
        except ValueError as exc:
            return Response({"errors": [str(exc)]}, status=400)
        except ImportFailed as exc:
            return Response({"errors": exc.as_strings()}, status=400)
        return Response(
            {
                "created": summary.created,
                "existing": summary.existing,
                "scale": list(summary.scale),
                "warnings": summary.warnings,
            },
            status=201,
        )


def _scale(data) -> tuple[float, float] | None:
    lo, hi = data.get("scale_min"), data.get("scale_max")
    if lo in (None, "") and hi in (None, ""):
        return None
    try:
        return (float(lo), float(hi))
    except (TypeError, ValueError) as exc:
        raise ValueError("scale_min and scale_max must both be numbers") from exc


class AuditCardsView(APIView):
    """Every report card of an audit and the judges side by side, as one JSON object (what
    `judge_audit --json` writes): the owner's, or with a share link (`?share=`)."""

    permission_classes = [READS_AUDIT_CARDS]

    @extend_schema(parameters=[OpenApiParameter("share", str, required=False)], responses=dict)
    def get(self, request, pk: int):
        from apps.analysis.cards.snapshots import audit_json

        audit = audit_readable(request.user, pk, request.query_params.get("share", ""))
        return Response(audit_json(audit))


class AuditCIFileView(APIView):
    """Every card's verdicts as a file CI tools read (docs/audit.md, "In CI"), what
    `judge_audit --junit` / `--promptfoo` write: the owner's, or with a share link (`?share=`)."""

    permission_classes = [READS_AUDIT_CARDS]
    ci_format = ""

    def get(self, request, pk: int):
        from apps.analysis.cards.ci_files import ci_file

        audit = audit_readable(request.user, pk, request.query_params.get("share", ""))
        text, content_type, name = ci_file(audit, self.ci_format)
        response = HttpResponse(text, content_type)
        response["Content-Disposition"] = f'attachment; filename="{name}"'
        return response


class AuditJUnitView(AuditCIFileView):
    ci_format = "junit.xml"

    @extend_schema(
        operation_id="judge_audits_junit",
        parameters=[OpenApiParameter("share", str, required=False)],
        responses={(200, "application/xml"): OpenApiTypes.STR},
    )
    def get(self, request, pk: int):
        """The audit's verdicts as JUnit XML: a test suite per judge, a test case per
        verdict line, failed where the judge misses."""
        return super().get(request, pk)


class AuditPromptfooView(AuditCIFileView):
    ci_format = "promptfoo.json"

    @extend_schema(
        operation_id="judge_audits_promptfoo",
        parameters=[OpenApiParameter("share", str, required=False)],
        responses=dict,
    )
    def get(self, request, pk: int):
        """The audit's verdicts as promptfoo's results JSON (`promptfoo eval -o`'s shape)."""
        return super().get(request, pk)


class AuditBaselineView(APIView):
    """Compare an audit's cards with saved ones (the body: a saved card or audit JSON, as
    `GET .../cards/` or a card's JSON download gave it): each figure's paired test, Holm-
    corrected, and `regressions`, the figures significantly worse now (docs/cards.md)."""

    permission_classes = [READS_AUDIT_CARDS]

    @extend_schema(
        parameters=[OpenApiParameter("share", str, required=False)],
        request=dict,
        responses={200: dict, 400: dict},
    )
    def post(self, request, pk: int):
        from apps.analysis.cards.baseline import BaselineError, baseline_compare

        audit = audit_readable(request.user, pk, request.query_params.get("share", ""))
        try:
            result = baseline_compare(audit, request.data)
        except BaselineError as exc:
            return Response({"errors": [str(exc)]}, status=400)
        return Response(
            {
                "regressions": result.regressions,
                "compared": result.compared,
                "comparison": result.report.as_dict(),
            }
        )
