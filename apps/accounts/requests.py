"""The request type our pages see: Django's, plus django-htmx's `request.htmx`."""

from django.contrib.auth.models import AnonymousUser
from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails

from apps.accounts.models import User


class AuthedRequest(HttpRequest):
    """A request that passed LoginRequiredMiddleware, seen through HtmxMiddleware."""

    htmx: HtmxDetails
    user: User | AnonymousUser  # type: ignore[assignment]
