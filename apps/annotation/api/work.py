"""The work through the API: one viewset for every type of work, a few lines per type.

For a type (docs/api.md): `POST <next>/` your current unit (200) or 204 when nothing is left;
`POST <skip>/` put it back; `GET <answers>/` your answers (researchers: everyone's);
`POST <answers>/` save one, with an `idempotency_key` (201 saved, 200 a repeat of a key seen,
nothing saved again) and optionally `based_on` (the answer's version you saw: 409 if it
changed since); `POST <answers>/?next=true` also hands out the next unit, in the same answer.
Roles: the type's role (404 outsiders, 403 other roles); researchers list.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

from django.urls import URLPattern, path
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    PolymorphicProxySerializer,
    extend_schema,
    extend_schema_view,
    inline_serializer,
)
from rest_framework import serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from apps.accounts.models import Role
from apps.annotation.models import Study, unit_of
from apps.annotation.permissions import STUDY_RESEARCHERS, does_work, study_access
from apps.annotation.services.controls import hand_out, put_back
from apps.annotation.services.errors import KeyReused, StaleJudgement, WorkRefused
from apps.annotation.services.work import Work

T = TypeVar("T")
NO_WORK = OpenApiResponse(description="No work left for you now.")
NEXT = OpenApiParameter(
    "next",
    bool,
    description="true: answer with the saved answer and your next unit, "
    '`{"saved": ..., "next": ... or null}`, in one round trip.',
)


class Conflict(ValidationError):
    status_code = status.HTTP_409_CONFLICT


def refusals(call: Callable[[], T]) -> T:
    """Run a service call, turning its refusals into the API's 403, 409 and 400."""
    try:
        return call()
    except WorkRefused as exc:
        raise PermissionDenied(str(exc)) from exc
    except (KeyReused, StaleJudgement) as exc:
        raise Conflict(str(exc)) from exc
    except ValueError as exc:
        raise ValidationError(str(exc)) from exc


_SHARED: dict[type, serializers.BaseSerializer] = {}


def shared(serializer_class: type[serializers.BaseSerializer]) -> serializers.BaseSerializer:
    """One instance of a serializer class per process, to validate input and show output:
    building a serializer's fields costs more than using them (docs/annotation.md, "Speed").
    Its fields keep no state between calls (no `data=`, no `instance`)."""
    if serializer_class not in _SHARED:
        _SHARED[serializer_class] = serializer_class()
    return _SHARED[serializer_class]


def valid(serializer_class: type[serializers.BaseSerializer], request: Request) -> dict:
    """The request's validated data (400, naming the fields, when it is not valid)."""
    return dict(shared(serializer_class).run_validation(request.data))


def shown(serializer_class: type[serializers.BaseSerializer], instance: Any) -> Any:
    return shared(serializer_class).to_representation(instance)


class WorkAPI(viewsets.GenericViewSet):
    """next / skip / list / create for one `Work` (see `work_api`)."""

    work: ClassVar[Work]
    item_serializer: ClassVar[type[serializers.Serializer]]
    answer_serializer: ClassVar[type[serializers.Serializer]]
    unit_serializer: ClassVar[type[serializers.Serializer] | None] = None
    #: What the list's serializer reads beside the person (select_related).
    related: ClassVar[tuple[str, ...]] = ()

    def get_permissions(self):
        """The type's role does the work; the study's researchers also read every answer."""
        declared = self.permission_classes
        if self.action == "list":
            declared = [STUDY_RESEARCHERS | declared[0]]
        return [permission() for permission in declared]

    def get_queryset(self):
        model = self.work.model
        if getattr(self, "swagger_fake_view", False):  # schema generation: no user
            return model._default_manager.none()
        return model._default_manager.select_related(model.person_field, *self.related)

    def study(self) -> Study:
        """The study (the permissions have checked the user's part in it)."""
        return study_access(self.request, self.kwargs["pk"]).study

    def brief(self, study: Study, slot: Any) -> Any:
        """What the API shows of a unit handed out."""
        unit = unit_of(slot, self.work.model.unit_fields)
        return self.work.item(study=study, person=self.request.user, unit=unit, held=True)

    @action(detail=False, methods=["post"])  # routed by work_api_urls; marks it for the schema
    def next(self, request: Request, pk: int) -> Response:
        """Your current unit, leased to you (claimed now if you hold none)."""
        study = self.study()
        slot = hand_out(self.work, study=study, person=request.user)
        if slot is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response(shown(self.item_serializer, self.brief(study, slot)))

    @action(detail=False, methods=["post"])
    def skip(self, request: Request, pk: int) -> Response:
        """Put the unit back (it comes back to you last)."""
        study = self.study()
        assert self.unit_serializer is not None
        unit = self.work.model.unit_from(valid(self.unit_serializer, request))
        put_back(self.work, study=study, person=request.user, unit=unit)
        return Response(status=status.HTTP_204_NO_CONTENT)

    def list(self, request: Request, pk: int) -> Response:
        """All answers (the study's researchers); your own (the type's role)."""
        study = self.study()
        rows = self.get_queryset().filter(study=study)
        if study_access(request, pk).role != Role.RESEARCHER:
            # Their own answers, a control item's too (it must look like any other).
            model = self.work.model
            rows = model.answers.select_related(model.person_field, *self.related).filter(
                study=study, **{model.person_field: request.user}
            )
        page = self.paginate_queryset(rows.order_by("id"))
        return self.get_paginated_response(self.get_serializer(page, many=True).data)

    def create(self, request: Request, pk: int) -> Response:
        """Save your answer (or change it): 201 saved, 200 the key's first save; with
        `?next=true`, also your next unit (`{"saved": ..., "next": ... or null}`)."""
        study = self.study()
        chained = self.chained(request)
        answer = valid(self.answer_serializer, request)
        key, based_on = answer.pop("idempotency_key"), answer.pop("based_on", None)
        active_seconds = answer.pop("active_seconds", None)
        saved = refusals(
            lambda: self.work.submit(
                study=study,
                person=request.user,
                unit=self.work.model.unit_from(answer),
                answer=answer,
                idempotency_key=key,
                based_on=based_on,
                active_seconds=active_seconds,
            )
        )
        code = status.HTTP_201_CREATED if saved.new else status.HTTP_200_OK
        judgement = shown(self.get_serializer_class(), saved.judgement)
        if not chained:
            return Response(judgement, status=code)
        slot = hand_out(self.work, study=study, person=request.user)
        following = None if slot is None else shown(self.item_serializer, self.brief(study, slot))
        return Response({"saved": judgement, "next": following}, status=code)

    def chained(self, request: Request) -> bool:
        """`?next=true`: answer with the saved answer and the next unit, in one round trip
        (as the pages do). Asked of a type that hands out no units: 400."""
        asked = request.query_params.get("next", "").lower()
        if asked in ("", "0", "false", "no"):
            return False
        if asked not in ("1", "true", "yes"):
            raise ValidationError({"next": f"'{asked[:40]}' is not true or false."})
        if self.item_serializer is None:
            raise ValidationError({"next": f"{self.work.name} hands out no units."})
        return True


#: Every type's API with its paths (`work_api`), in the order made: what `work_api_urls` serves.
_APIS: list[tuple[type[WorkAPI], str, str, str]] = []


def work_api(
    work: Work,
    *,
    answers: str,
    next: str = "",
    skip: str = "",
    judgement: type[serializers.Serializer],
    answer: type[serializers.Serializer],
    item: type[serializers.Serializer] | None = None,
    unit: type[serializers.Serializer] | None = None,
    related: tuple[str, ...] = (),
    base: type[WorkAPI] = WorkAPI,
) -> type[WorkAPI]:
    """The API of one type of work, its schema documented from its serializers, served at
    `studies/<pk>/<answers>/` and, when the type hands out units, `<next>/` and `<skip>/`."""
    schemas: dict[str, Any] = {
        "list": extend_schema(responses=judgement(many=True)),
        "create": extend_schema(request=answer, responses={201: judgement, 200: judgement}),
    }
    if item is not None:
        schemas["next"] = extend_schema(request=None, responses={200: item, 204: NO_WORK})
        chained = inline_serializer(
            f"{type(work).__name__.removesuffix('Work')}SavedAndNext",
            {"saved": judgement(), "next": item(allow_null=True)},
        )
        either = PolymorphicProxySerializer(
            f"{type(work).__name__.removesuffix('Work')}Submitted", [judgement, chained], None
        )
        schemas["create"] = extend_schema(
            request=answer, parameters=[NEXT], responses={201: either, 200: either}
        )
    if unit is not None:
        schemas["skip"] = extend_schema(request=unit, responses={204: None})
    attrs = {
        "work": work,
        "permission_classes": [does_work(work.role)],
        "serializer_class": judgement,
        "answer_serializer": answer,
        "item_serializer": item,
        "unit_serializer": unit,
        "related": related,
        "__doc__": f"{work.name} (docs/annotation.md).",
    }
    api = extend_schema_view(**schemas)(type(f"{type(work).__name__}API", (base,), attrs))
    _APIS.append((api, answers, next, skip))
    return api


def work_api_urls() -> list[URLPattern]:
    """The URLs of every type's API (each type's module made it with `work_api`)."""
    return [url for api, *paths in _APIS for url in _work_urls(api, *paths)]


def _work_urls(api: type[WorkAPI], answers: str, next: str, skip: str) -> list[URLPattern]:
    """`studies/<pk>/<answers>/` (GET list, POST submit), and `<next>/`, `<skip>/` if given."""
    study = "studies/<int:pk>/"
    name = api.work.slug
    urls: list[URLPattern] = [
        path(
            f"{study}{answers}/",
            api.as_view({"get": "list", "post": "create"}),
            name=f"api-{name}-answers",
        )
    ]
    if next:
        urls.append(path(f"{study}{next}/", api.as_view({"post": "next"}), name=f"api-{name}-next"))
    if skip:
        urls.append(path(f"{study}{skip}/", api.as_view({"post": "skip"}), name=f"api-{name}-skip"))
    return urls
