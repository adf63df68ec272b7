"""Report pages and downloads (HTML with plots, CSV, JSON, one self-contained HTML)."""

from __future__ import annotations

from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils.text import slugify

from apps.accounts.permissions import allow
from apps.accounts.requests import AuthedRequest
from apps.analysis.permissions import READS_REPORTS
from apps.analysis.reports import RUN_REPORTS, STUDY_REPORTS, TITLES
from apps.analysis.reports.base import Report
from apps.analysis.selectors import report_run
from apps.analysis.services import report_get
from apps.annotation.permissions import study_access
from apps.judging.models import JudgeRun


def _snapshot(request: AuthedRequest, pk: int, name: str):
    study = study_access(request, pk).study
    if name not in STUDY_REPORTS and name not in RUN_REPORTS:
        raise Http404("no such report")
    run = report_run(study, request.GET.get("run"))
    if (name in RUN_REPORTS) != (run is not None):
        raise Http404("judge reliability needs ?run=<id>; the others take no run")
    return study, run, report_get(study=study, name=name, run=run)


@allow(READS_REPORTS)
def report_index(request: AuthedRequest, pk: int) -> HttpResponse:
    study = study_access(request, pk).study
    runs = JudgeRun.objects.filter(study=study).select_related("judge", "strategy")
    return render(
        request,
        "analysis/index.html",
        {"study": study, "reports": [(n, TITLES[n]) for n in STUDY_REPORTS], "runs": runs},
    )


@allow(READS_REPORTS)
def report_page(request: AuthedRequest, pk: int, name: str) -> HttpResponse:
    study, run, snapshot = _snapshot(request, pk, name)
    context = {
        "study": study,
        "run": run,
        "snapshot": snapshot,
        "name": name,
        "title": TITLES[name],
        "report": Report.from_dict(snapshot.payload) if snapshot.status == "done" else None,
    }
    template = "analysis/report.html" + ("#body" if request.htmx else "")
    return render(request, template, context)


def _not_ready(request: AuthedRequest, study, run, name: str, snapshot) -> HttpResponse:
    """The report page's panel (building, or failed with its reason) instead of a file."""
    context = {"study": study, "run": run, "snapshot": snapshot, "name": name}
    context |= {"title": TITLES[name], "report": None}
    status = 202 if snapshot.status == "building" else 409
    return render(request, "analysis/report.html", context, status=status)


@allow(READS_REPORTS)
def report_download(request: AuthedRequest, pk: int, name: str, file_format: str):
    study, run, snapshot = _snapshot(request, pk, name)
    if file_format not in ("csv", "json"):
        raise Http404("use .csv or .json")
    if snapshot.status != "done":
        return _not_ready(request, study, run, name, snapshot)
    filename = slugify(f"{study.slug}-{name}" + (f"-run-{run.pk}" if run else ""))
    response: HttpResponse
    if file_format == "json":
        response = JsonResponse(snapshot.payload)
    else:
        report = Report.from_dict(snapshot.payload)
        response = HttpResponse(report.table_csv(request.GET.get("table")), "text/csv")
    response["Content-Disposition"] = f'attachment; filename="{filename}.{file_format}"'
    return response


@allow(READS_REPORTS)
def study_report_file(request: AuthedRequest, pk: int) -> HttpResponse:
    """Every report of the study in one HTML file, images inlined, to share or archive."""
    study = study_access(request, pk).study
    parts = [(TITLES[n], report_get(study=study, name=n)) for n in STUDY_REPORTS]
    for run in JudgeRun.objects.filter(study=study).select_related("judge", "strategy", "study"):
        title = f"{TITLES['judge-reliability']}: run {run.pk}, {run.judge.name}"
        parts.append((title, report_get(study=study, name="judge-reliability", run=run)))
    reports = [
        {
            "title": title,
            "snapshot": snapshot,
            "report": Report.from_dict(snapshot.payload) if snapshot.status == "done" else None,
        }
        for title, snapshot in parts
    ]
    html = render_to_string("analysis/study_report.html", {"study": study, "reports": reports})
    response = HttpResponse(html, "text/html")
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-report.html"'
    return response
