"""Every routed view declares who may use it (docs/api.md, "Access").

Walks the URL conf: a page must be wrapped in ``@allow(...)`` (apps.accounts.permissions), an
API view must set ``permission_classes`` itself, in our code (not DRF's default nor a
framework's). The admin is Django's, and checks staff itself. A new view that declares
nothing fails here, before anyone asks who may open it. tests/test_access.py then checks what
each declaration lets through, for every role.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser
from django.http import HttpResponse
from django.test import Client, RequestFactory
from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.views import APIView

from apps.accounts.permissions import IsResearcher, allow
from apps.annotation.permissions import IsStudyAnnotator, IsStudyOwner, study_access
from tests.factories import MembershipFactory, StudyFactory, UserFactory

OURS = ("apps.", "config.", "tests.")


def _views(patterns: list[Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            if pattern.app_name == "admin":
                continue
            yield from _views(pattern.url_patterns, prefix + str(pattern.pattern))
        elif isinstance(pattern, URLPattern):
            yield prefix + str(pattern.pattern), pattern.callback


def _declaring_class(cls: type) -> type | None:
    """The class whose own body sets ``permission_classes`` for this API view."""
    return next((k for k in cls.__mro__ if "permission_classes" in vars(k)), None)


def undeclared(callback: Any) -> str | None:
    """Why this view declares nobody, or None if it declares who may use it."""
    if "access_policy" in vars(callback):
        return None if callback.access_policy else "@allow() names nobody"
    cls = getattr(callback, "cls", None)
    if cls is None:
        return "a page without @allow(...)"
    declaring = _declaring_class(cls)
    if declaring is None or declaring is APIView or not declaring.__module__.startswith(OURS):
        return f"{cls.__name__} does not set permission_classes"
    if not cls.permission_classes:
        return f"{cls.__name__} sets no permission class (say AllowAny if anyone may)"
    return None


def _annotation(view: Any) -> bool:
    module = getattr(getattr(view, "cls", view), "__module__", "")
    return module.startswith("apps.annotation.")


def _problems(*, annotation: bool) -> list[str]:
    found = list(_views(get_resolver().url_patterns))
    assert len(found) > 60
    return [
        f"{route}: {why}"
        for route, view in found
        if _annotation(view) == annotation and (why := undeclared(view))
    ]


def test_every_view_declares_who_may_use_it():
    problems = _problems(annotation=False)
    assert not problems, "\n".join(problems)


def test_every_annotation_view_declares_who_may_use_it():
    """Annotation's pages and API: the work pages declare their type's role (views/work.py,
    api/work.py), the set-up the study's owner."""
    problems = _problems(annotation=True)
    assert not problems, "\n".join(problems)


def test_a_view_that_declares_nothing_is_caught():
    def page(request):
        raise AssertionError

    class Endpoint(APIView):
        pass

    class Declared(APIView):
        permission_classes = [IsResearcher]

    assert undeclared(page) == "a page without @allow(...)"
    assert "does not set permission_classes" in str(undeclared(Endpoint.as_view()))
    assert undeclared(allow(IsResearcher)(page)) is None
    assert undeclared(Declared.as_view()) is None


# --- the page decorator -----------------------------------------------------------------------


@allow(IsResearcher)
def _researchers_page(request):
    return HttpResponse("ok")


@allow(IsStudyOwner | IsStudyAnnotator)
def _study_page(request, pk):
    return HttpResponse(study_access(request, pk).study.name)


def _call(view, user, **kwargs):
    request = RequestFactory().get("/somewhere/")
    request.user = user or AnonymousUser()
    try:
        return view(request, **kwargs).status_code
    except Exception as exc:  # what Django turns into 403 and 404
        return type(exc).__name__


@pytest.mark.django_db
def test_pages_are_refused_by_the_same_classes_as_the_api():
    researcher = UserFactory(role="researcher")
    annotator = UserFactory(role="annotator")
    assert _call(_researchers_page, researcher) == 200
    assert _call(_researchers_page, annotator) == "PermissionDenied"
    assert _call(_researchers_page, None) == 302  # to the login page
    study = StudyFactory(owner=researcher)
    MembershipFactory(study=study, user=annotator, role="annotator")
    expert = MembershipFactory(study=study, user=UserFactory(role="expert"), role="expert").user
    assert _call(_study_page, researcher, pk=study.pk) == 200
    assert _call(_study_page, annotator, pk=study.pk) == 200
    assert _call(_study_page, expert, pk=study.pk) == "PermissionDenied"
    assert _call(_study_page, UserFactory(role="researcher"), pk=study.pk) == "Http404"
    assert _call(_study_page, annotator, pk=study.pk + 1) == "Http404"


@pytest.mark.django_db
def test_public_pages_need_no_login():
    assert allow(AllowAny)(lambda request: None).login_required is False
    assert not hasattr(allow(IsAuthenticated)(lambda request: None), "login_required")
    assert Client().get("/healthz").status_code == 200
