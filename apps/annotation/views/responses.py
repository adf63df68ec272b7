"""Small answers shared by the annotation pages, and the one mapping of a service's refusal
to an answer (the API has its twin in api/work.py)."""

from django.core.exceptions import PermissionDenied
from django.forms import Form
from django.http import HttpResponse
from django_htmx.http import trigger_client_event

from apps.annotation.services.errors import KeyReused, StaleJudgement, WorkRefused

#: What a service refuses with: not yours (403), a conflict (409), bad input (400).
REFUSALS = (WorkRefused, KeyReused, StaleJudgement, ValueError)


def refused(exc: Exception) -> HttpResponse:
    """403 for work that is not the user's, 409 for a reused key or a stale tab, 400 for bad
    input; the message says which."""
    if isinstance(exc, WorkRefused):
        raise PermissionDenied(str(exc)) from exc
    if isinstance(exc, KeyReused | StaleJudgement):
        return conflict(str(exc))
    return HttpResponse(f"Not saved: {exc}", status=400, content_type="text/plain")


def bad_request(form: Form) -> HttpResponse:
    errors = "; ".join(f"{name}: {' '.join(map(str, msgs))}" for name, msgs in form.errors.items())
    return HttpResponse(f"Not saved: {errors}", status=400, content_type="text/plain")


def conflict(message: str) -> HttpResponse:
    return HttpResponse(message, status=409, content_type="text/plain")


def saved_event(response: HttpResponse, message: str) -> HttpResponse:
    """Tell the page's status line what was saved (htmx event `judgement-saved`)."""
    return trigger_client_event(response, "judgement-saved", {"message": message})
