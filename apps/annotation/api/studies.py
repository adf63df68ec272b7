"""Studies through the API: set-up, people, settings and the plan (the work itself is in
api/work.py). Each action declares who may use it (`action_permissions`): 404 for someone
with no part in the study, 403 for a member whose role does not fit.
"""

from typing import Any, ClassVar

from django.core.exceptions import ValidationError as DjangoValidationError
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from apps.accounts.permissions import IsAuthenticated
from apps.accounts.services import invitation_url
from apps.annotation import serializers as s
from apps.annotation.api.work import valid
from apps.annotation.models import Study
from apps.annotation.permissions import (
    STUDY_RESEARCHERS,
    CreatesStudies,
    IsStudyOwner,
    study_access,
)
from apps.annotation.selectors import study_members
from apps.annotation.services import study_plan_request
from apps.annotation.services.members import (
    study_member_add,
    study_member_remove,
    study_member_role_set,
    study_members_create,
)
from apps.annotation.services.studies import study_archive, study_create, study_update


class StudyViewSet(viewsets.ReadOnlyModelViewSet):
    serializer_class = s.StudySerializer
    #: Listing and reading: anyone logged in, who sees only the studies they own or joined.
    permission_classes = [IsAuthenticated]
    #: Who may use the other actions.
    action_permissions: ClassVar[dict[str, list[Any]]] = {
        "create": [CreatesStudies],
        "partial_update": [IsStudyOwner],
        "members": [IsStudyOwner],
        "member": [IsStudyOwner],
        "update_settings": [STUDY_RESEARCHERS],
        "plan": [STUDY_RESEARCHERS],
    }

    def get_permissions(self):
        declared = self.action_permissions.get(self.action or "", self.permission_classes)
        return [permission() for permission in declared]

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # schema generation: no user
            return Study.objects.none()
        return (
            Study.objects.for_user(self.request.user)
            .select_related("owner")
            .prefetch_related("datasets", "kinds", "criteria", "memberships__user")
        )

    def _study(self, pk) -> Study:
        """The study of a detail action (its permission has checked the user's part)."""
        return study_access(self.request, pk).study

    def _read(self, study: Study) -> Response:
        return Response(s.StudySerializer(self.get_queryset().get(pk=study.pk)).data)

    # --- set-up by the study's researcher ------------------------------------------------

    @extend_schema(request=s.StudyWriteSerializer, responses={201: s.StudySerializer})
    def create(self, request: Request) -> Response:
        """Create a study (researchers); its plan is built at once."""
        serializer = s.StudyWriteSerializer(data=request.data, user=request.user)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        archived = data.pop("archived", False)
        study = _django_errors(lambda: study_create(owner=request.user, **data))
        if archived:
            study_archive(study=study)
        response = self._read(study)
        response.status_code = status.HTTP_201_CREATED
        return response

    @extend_schema(request=s.StudyWriteSerializer, responses=s.StudySerializer)
    def partial_update(self, request: Request, pk=None) -> Response:
        """Change a study you own (any subset of fields); `archived` archives or brings back."""
        study = self._study(pk)
        serializer = s.StudyWriteSerializer(
            study, data=request.data, partial=True, user=request.user
        )
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        if "archived" in data:
            study_archive(study=study, archived=data.pop("archived"))
        _django_errors(lambda: study_update(study=study, **data))
        return self._read(study)

    @extend_schema(
        methods=["post"],
        request=s.MemberAddSerializer,
        responses={201: s.MemberSerializer, 200: s.NewAccountSerializer(many=True)},
    )
    @extend_schema(methods=["get"], responses=s.MemberSerializer(many=True))
    @action(detail=True, methods=["get", "post"], pagination_class=None)
    def members(self, request: Request, pk=None) -> Response:
        """GET: the study's people. POST `username`: add an existing account (201); POST
        `usernames`: create those accounts (all or none) and answer their passwords or
        invitation links, shown this once (200)."""
        study = self._study(pk)
        if request.method == "GET":
            return Response(s.MemberSerializer(study_members(study), many=True).data)
        data = valid(s.MemberAddSerializer, request)
        if "username" in data:
            membership = _django_errors(
                lambda: study_member_add(study=study, username=data["username"], role=data["role"])
            )
            row = study_members(study).get(pk=membership.pk)
            return Response(s.MemberSerializer(row).data, status=status.HTTP_201_CREATED)
        made = _django_errors(
            lambda: study_members_create(
                study=study,
                usernames=data["usernames"],
                role=data["role"],
                passwords=data["access"] == "password",
            )
        )
        return Response(
            [
                {
                    "username": a.user.username,
                    "role": data["role"],
                    "password": a.password,
                    "invitation": invitation_url(request, a),
                }
                for a in made
            ]
        )

    @extend_schema(methods=["patch"], request=s.MemberRoleSerializer, responses=s.MemberSerializer)
    @extend_schema(methods=["delete"], request=None, responses={204: None})
    @action(
        detail=True,
        methods=["patch", "delete"],
        url_path=r"members/(?P<username>[\w.@+-]+)",
    )
    def member(self, request: Request, pk=None, username=None) -> Response:
        """PATCH: change a member's role. DELETE: remove them (their judgements stay)."""
        study = self._study(pk)
        membership = get_object_or_404(
            study.memberships.select_related("user", "study"), user__username=username
        )
        if request.method == "DELETE":
            study_member_remove(membership=membership)
            return Response(status=status.HTTP_204_NO_CONTENT)
        data = valid(s.MemberRoleSerializer, request)
        study_member_role_set(membership=membership, role=data["role"])
        return Response(s.MemberSerializer(study_members(study).get(pk=membership.pk)).data)

    # --- researcher ----------------------------------------------------------------------

    @extend_schema(request=s.StudySettingsSerializer, responses=s.StudySerializer)
    @action(detail=True, methods=["patch"], url_path="settings")
    def update_settings(self, request: Request, pk=None) -> Response:
        """Change the annotation settings (researchers), then bring the plan up to date."""
        study = self._study(pk)
        serializer = s.StudySettingsSerializer(study, data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        serializer.save()
        study_plan_request(study=study)
        return Response(s.StudySerializer(self.get_queryset().get(pk=study.pk)).data)

    @extend_schema(
        request=None,
        responses={
            200: s.PlanSummarySerializer,
            202: OpenApiResponse(description="Large plan: the worker builds it."),
        },
    )
    @action(detail=True, methods=["post"])
    def plan(self, request: Request, pk=None) -> Response:
        """Build (or bring up to date) the study's plan: slots and the criteria design. Large
        plans are built by the worker (202); `plan_built_at` on the study tells when done."""
        summary = study_plan_request(study=self._study(pk))
        if summary is None:
            return Response({"queued": True}, status=status.HTTP_202_ACCEPTED)
        return Response(summary.as_dict())


def _django_errors(call):
    """Run a service, turning Django's validation errors into the API's 400."""
    try:
        return call()
    except DjangoValidationError as exc:
        detail = exc.message_dict if hasattr(exc, "error_dict") else exc.messages
        raise ValidationError(detail) from exc
