"""Report cards of an audit's judges and the judges side by side (docs/cards.md): pages,
the one-file HTML and JSON downloads, the files CI tools read (JUnit XML, promptfoo's results
JSON) and the owner's read-only share links."""

from __future__ import annotations

import json
import logging
from typing import Any

from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.text import slugify
from django.views.decorators.http import require_GET, require_POST

from apps.accounts.permissions import allow
from apps.accounts.requests import AuthedRequest
from apps.analysis.improvement_views import improvable
from apps.analysis.models import CardShare
from apps.analysis.permissions import READS_AUDIT_CARDS, SHARES_AUDIT_CARDS
from apps.analysis.reports.base import Report
from apps.analysis.selectors import audit_owned, audit_readable
from apps.judging.models import AuditSubject, Improvement

logger = logging.getLogger(__name__)
FILES = ("html", "json", "csv")
#: A saved audit of many judges is a few megabytes; more is not a saved card.
MAX_SAVED_BYTES = 50_000_000


def _report(build, *args) -> tuple[Report | None, str]:
    """The report, or why it could not be built (shown on the page, never a 500)."""
    try:
        return build(*args), ""
    except Exception as exc:
        logger.exception("an audit card could not be built")
        return None, f"{type(exc).__name__}: {exc}"


def _context(request: AuthedRequest, pk: int, subject_pk: int | None) -> dict[str, Any]:
    # the cards pull in numpy, scipy and matplotlib: imported when first used (the server
    # preloads them, settings.DISCERN_PRELOAD), never by the URL conf
    from apps.analysis.cards.comparison import subjects_of
    from apps.analysis.cards.snapshots import audit_fingerprint, card_get, comparison_get

    share = request.GET.get("share", "")
    audit = audit_readable(request.user, pk, share)
    subjects = subjects_of(audit)
    subject = None
    if subject_pk is not None:
        subject = next((s for s in subjects if s.pk == subject_pk), None)
        if subject is None:
            raise Http404("no such subject in this audit")
    fingerprint = audit_fingerprint(audit)
    if subject is not None:
        report, error = _report(card_get, subject, fingerprint)
    else:
        report, error = _report(comparison_get, audit, fingerprint)
    owner = audit.owner_id == request.user.pk or request.user.is_superuser
    return {
        "audit": audit,
        "subjects": subjects,
        "subject": subject,
        "report": report,
        "error": error,
        "share": share,
        "query": f"?share={share}" if share else "",
        "owner": owner,
        "base": "",
    }


def _page(request: AuthedRequest, context: dict[str, Any]) -> HttpResponse:
    if context["owner"]:
        context["shares"] = CardShare.objects.filter(
            audit=context["audit"], revoked_at__isnull=True
        )
    subject = context["subject"]
    if context["owner"] and subject is not None and subject.strategy is not None:
        context["improvable"] = improvable(request.user, subject)
        context["improvements"] = Improvement.objects.for_user(request.user).filter(subject=subject)
    return render(request, "analysis/audit_card.html", context)


@allow(READS_AUDIT_CARDS)
@require_GET
def audit_card(request: AuthedRequest, pk: int, subject_pk: int) -> HttpResponse:
    return _page(request, _context(request, pk, subject_pk))


@allow(READS_AUDIT_CARDS)
@require_GET
def audit_compare(request: AuthedRequest, pk: int) -> HttpResponse:
    return _page(request, _context(request, pk, None))


def _file(request: AuthedRequest, context: dict[str, Any], file_format: str) -> HttpResponse:
    if file_format not in FILES:
        raise Http404("use .html, .json or .csv")
    report: Report | None = context["report"]
    if report is None:
        return render(request, "analysis/audit_card.html", context, status=409)
    subject = context["subject"]
    name = slugify(
        f"audit-{context['audit'].pk}-" + (f"card-{subject.pk}" if subject else "compare")
    )
    response: HttpResponse
    if file_format == "json":
        response = JsonResponse(report.as_dict())
    elif file_format == "csv":
        response = HttpResponse(report.table_csv(), "text/csv")
    else:
        base = request.build_absolute_uri("/").rstrip("/")
        html = render_to_string("analysis/audit_card_file.html", context | {"base": base})
        response = HttpResponse(html, "text/html")
    response["Content-Disposition"] = f'attachment; filename="{name}.{file_format}"'
    return response


@allow(READS_AUDIT_CARDS)
@require_GET
def audit_card_file(request: AuthedRequest, pk: int, subject_pk: int, file_format: str):
    return _file(request, _context(request, pk, subject_pk), file_format)


@allow(READS_AUDIT_CARDS)
@require_GET
def audit_compare_file(request: AuthedRequest, pk: int, file_format: str):
    return _file(request, _context(request, pk, None), file_format)


@allow(READS_AUDIT_CARDS)
@require_GET
def audit_json_file(request: AuthedRequest, pk: int) -> HttpResponse:
    """Every card and the comparison in one JSON file: what `judge_audit --json` writes."""
    audit = audit_readable(request.user, pk, request.GET.get("share", ""))
    from apps.analysis.cards.snapshots import audit_json_text

    response = HttpResponse(audit_json_text(audit), "application/json")
    response["Content-Disposition"] = f'attachment; filename="audit-{audit.pk}.json"'
    return response


def _ci_file(request: AuthedRequest, pk: int, subject_pk: int | None, ci_format: str):
    """The verdicts of the audit (of one card with ``subject_pk``) as a file CI tools read."""
    from apps.analysis.cards.ci_files import ci_file

    audit = audit_readable(request.user, pk, request.GET.get("share", ""))
    subject = None
    if subject_pk is not None:
        subject = get_object_or_404(AuditSubject, pk=subject_pk, audit=audit)
    text, content_type, name = ci_file(audit, ci_format, subject=subject)
    response = HttpResponse(text, content_type)
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


@allow(READS_AUDIT_CARDS)
@require_GET
def audit_ci_file(request: AuthedRequest, pk: int, ci_format: str) -> HttpResponse:
    """Every card's verdicts as JUnit XML or promptfoo's results JSON (docs/audit.md, "In
    CI"): what `judge_audit --junit` and `--promptfoo` write."""
    return _ci_file(request, pk, None, ci_format)


@allow(READS_AUDIT_CARDS)
@require_GET
def audit_card_ci_file(
    request: AuthedRequest, pk: int, subject_pk: int, ci_format: str
) -> HttpResponse:
    """One card's verdicts as JUnit XML or promptfoo's results JSON."""
    return _ci_file(request, pk, subject_pk, ci_format)


def _shares(request: AuthedRequest, audit) -> HttpResponse:
    shares = CardShare.objects.filter(audit=audit, revoked_at__isnull=True)
    context = {"audit": audit, "shares": shares, "owner": True, "subject": None}
    return render(request, "analysis/audit_card.html#shares", context)


@allow(SHARES_AUDIT_CARDS)
@require_POST
def audit_share_new(request: AuthedRequest, pk: int) -> HttpResponse:
    """A new read-only link to this audit's cards (who opens it must log in)."""
    audit = audit_owned(request.user, pk)
    CardShare.objects.create(audit=audit, created_by=audit.owner)
    return _shares(request, audit)


@allow(SHARES_AUDIT_CARDS)
@require_POST
def audit_share_revoke(request: AuthedRequest, pk: int, share_pk: int) -> HttpResponse:
    """The link stops working at once; a new one can be made."""
    audit = audit_owned(request.user, pk)
    share = get_object_or_404(CardShare, pk=share_pk, audit=audit)
    share.revoked_at = share.revoked_at or timezone.now()
    share.save(update_fields=["revoked_at"])
    return _shares(request, audit)


@allow(READS_AUDIT_CARDS)
@require_POST
def audit_baseline(request: AuthedRequest, pk: int) -> HttpResponse:
    """The audit's cards against a saved card or audit JSON (an uploaded file): each figure's
    paired test, and which figures got significantly worse (docs/cards.md)."""
    from apps.analysis.cards.baseline import BaselineError, baseline_compare

    share = request.GET.get("share", "")
    audit = audit_readable(request.user, pk, share)
    upload = request.FILES.get("saved")
    context: dict[str, Any] = {"audit": audit, "query": f"?share={share}" if share else ""}
    try:
        if upload is None:
            raise BaselineError("choose the saved card's JSON file")
        data = json.loads(upload.read(MAX_SAVED_BYTES + 1)[:MAX_SAVED_BYTES] or b"null")
        result = baseline_compare(audit, data)
    except (BaselineError, ValueError) as exc:
        context["error"] = f"{upload.name if upload else 'the file'}: {exc}"
        return render(request, "analysis/audit_baseline.html", context, status=400)
    owner = audit.owner_id == request.user.pk or request.user.is_superuser
    context |= {"result": result, "report": result.report, "owner": owner, "base": ""}
    return render(request, "analysis/audit_baseline.html", context)
