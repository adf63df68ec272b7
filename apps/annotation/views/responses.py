"""Small answers shared by the annotation pages."""

from django.forms import Form
from django.http import HttpResponse
from django_htmx.http import trigger_client_event


def bad_request(form: Form) -> HttpResponse:
    errors = "; ".join(f"{name}: {' '.join(map(str, msgs))}" for name, msgs in form.errors.items())
    return HttpResponse(f"Not saved: {errors}", status=400, content_type="text/plain")


def conflict(message: str) -> HttpResponse:
    return HttpResponse(message, status=409, content_type="text/plain")


def saved_event(response: HttpResponse, message: str) -> HttpResponse:
    """Tell the page's status line what was saved (htmx event `judgement-saved`)."""
    return trigger_client_event(response, "judgement-saved", {"message": message})
