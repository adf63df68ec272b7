"""`{% load report_links %}{% report_links study %}`: links to every report of a study (its
study-level reports, each judge run's reliability report, and the one-file download)."""

from typing import Any

from django import template

from apps.analysis.reports import STUDY_REPORTS, TITLES
from apps.judging.models import JudgeRun

register = template.Library()


@register.inclusion_tag("analysis/_report_links.html")
def report_links(study: Any, run: Any = None) -> dict[str, Any]:
    """All of `study`'s reports; with `run`, that run's reliability report first."""
    runs = [run] if run is not None else _runs(study)
    return {
        "study": study,
        "report_titles": [(name, TITLES[name]) for name in STUDY_REPORTS],
        "report_runs": runs,
        "reliability_title": TITLES["judge-reliability"],
    }


def _runs(study: Any) -> list[JudgeRun]:
    return list(JudgeRun.objects.filter(study=study).select_related("judge").order_by("pk"))
