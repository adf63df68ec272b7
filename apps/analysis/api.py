"""Reports as JSON through the API: GET /api/v1/studies/{id}/reports/{name}/[?run=ID]."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.analysis.reports import RUN_REPORTS, STUDY_REPORTS
from apps.analysis.selectors import report_run, report_study_for_user
from apps.analysis.services import report_get


class ReportView(APIView):
    @extend_schema(
        parameters=[OpenApiParameter("run", int, required=False)], responses={200: dict, 202: dict}
    )
    def get(self, request, pk: int, name: str):
        study = report_study_for_user(request.user, pk)
        if name not in STUDY_REPORTS and name not in RUN_REPORTS:
            return Response({"detail": f"no report '{name}'"}, status=404)
        run = report_run(study, request.query_params.get("run"))
        if (name in RUN_REPORTS) != (run is not None):
            return Response({"detail": "judge-reliability needs ?run=<id>"}, status=400)
        snapshot = report_get(study=study, name=name, run=run)
        if snapshot.status != "done":
            return Response({"status": snapshot.status, "error": snapshot.error}, status=202)
        return Response(snapshot.payload)
