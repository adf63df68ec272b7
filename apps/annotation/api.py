"""Annotation API: the same services as the pages, for scripts and other front ends.

Every action goes through the caller's role in the study (404 for outsiders, 403 for a
member with another role); submits carry an idempotency key and answer 201 when saved, 200
when the key had been seen (nothing saved again).
"""

from dataclasses import asdict

from django.core.exceptions import ValidationError as DjangoValidationError
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from apps.accounts.models import Role
from apps.accounts.permissions import is_researcher
from apps.accounts.services import invitation_url
from apps.annotation import serializers as s
from apps.annotation.models import Comparison, ExpertVote, Study, Vetting
from apps.annotation.selectors import study_for_owner, study_for_role, study_members, study_role
from apps.annotation.selectors.progress import study_progress
from apps.annotation.selectors.survey import kind_weights
from apps.annotation.selectors.work import comparison_item, vetting_brief
from apps.annotation.services import (
    KeyReused,
    Saved,
    StaleJudgement,
    WorkRefused,
    comparison_next,
    comparison_skip,
    comparison_submit,
    expert_vote_submit,
    perturbation_edit,
    study_plan_request,
    vetting_next,
    vetting_skip,
    vetting_submit,
)
from apps.annotation.services.members import (
    study_member_add,
    study_member_remove,
    study_member_role_set,
    study_members_create,
)
from apps.annotation.services.studies import study_archive, study_create, study_update
from apps.corpus.serializers import VersionSerializer

NO_WORK = OpenApiResponse(description="No work left for you now.")


class Conflict(ValidationError):
    status_code = status.HTTP_409_CONFLICT


def _refusals(call):
    """Run a service call, turning its refusals into API errors."""
    try:
        return call()
    except WorkRefused as exc:
        raise PermissionDenied(str(exc)) from exc
    except (KeyReused, StaleJudgement) as exc:
        raise Conflict(str(exc)) from exc
    except ValueError as exc:
        raise ValidationError(str(exc)) from exc


def _saved(saved: Saved, serializer) -> Response:
    code = status.HTTP_201_CREATED if saved.new else status.HTTP_200_OK
    return Response(serializer(saved.judgement).data, status=code)


def _valid(serializer_class, request: Request) -> dict:
    serializer = serializer_class(data=request.data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


class StudyViewSet(viewsets.ReadOnlyModelViewSet):
    serializer_class = s.StudySerializer

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # schema generation: no user
            return Study.objects.none()
        return (
            Study.objects.for_user(self.request.user)
            .select_related("owner")
            .prefetch_related("datasets", "kinds", "criteria", "memberships__user")
        )

    def _study(self, pk, *roles: str) -> Study:
        return study_for_role(self.request.user, int(pk), *roles)

    def _read(self, study: Study) -> Response:
        return Response(s.StudySerializer(self.get_queryset().get(pk=study.pk)).data)

    # --- set-up by the study's researcher ------------------------------------------------

    @extend_schema(request=s.StudyWriteSerializer, responses={201: s.StudySerializer})
    def create(self, request: Request) -> Response:
        """Create a study (researchers); its plan is built at once."""
        if not is_researcher(request.user):
            raise PermissionDenied("Only researchers create studies.")
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
        study = study_for_owner(request.user, int(pk))
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
        study = study_for_owner(request.user, int(pk))
        if request.method == "GET":
            return Response(s.MemberSerializer(study_members(study), many=True).data)
        data = _valid(s.MemberAddSerializer, request)
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
        study = study_for_owner(request.user, int(pk))
        membership = get_object_or_404(
            study.memberships.select_related("user", "study"), user__username=username
        )
        if request.method == "DELETE":
            study_member_remove(membership=membership)
            return Response(status=status.HTTP_204_NO_CONTENT)
        data = _valid(s.MemberRoleSerializer, request)
        study_member_role_set(membership=membership, role=data["role"])
        return Response(s.MemberSerializer(study_members(study).get(pk=membership.pk)).data)

    # --- researcher ----------------------------------------------------------------------

    @extend_schema(request=s.StudySettingsSerializer, responses=s.StudySerializer)
    @action(detail=True, methods=["patch"], url_path="settings")
    def update_settings(self, request: Request, pk=None) -> Response:
        """Change the annotation settings (researchers), then bring the plan up to date."""
        study = self._study(pk, Role.RESEARCHER)
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
        summary = study_plan_request(study=self._study(pk, Role.RESEARCHER))
        if summary is None:
            return Response({"queued": True}, status=status.HTTP_202_ACCEPTED)
        return Response(asdict(summary))

    @extend_schema(responses={200: OpenApiResponse(description="Counts of work and judgements.")})
    @action(detail=True, methods=["get"])
    def progress(self, request: Request, pk=None) -> Response:
        progress = study_progress(self._study(pk, Role.RESEARCHER))
        data = {
            key: value
            for key, value in progress.__dict__.items()
            if key not in ("annotators", "kinds")
        }
        data["annotators"] = [
            {**row.__dict__, "verdicts": dict(row.verdicts), "agreement": _str(row.agreement)}
            for row in progress.annotators
        ]
        data["kinds"] = [
            {**row.__dict__, "verdicts": dict(row.verdicts), "outcomes": dict(row.outcomes)}
            for row in progress.kinds
        ]
        return Response(data)

    @extend_schema(responses={200: OpenApiResponse(description="Expert weights per kind.")})
    @action(detail=True, methods=["get"])
    def weights(self, request: Request, pk=None) -> Response:
        study = self._study(pk, Role.RESEARCHER)
        return Response(
            [
                {
                    "task": row.task.slug,
                    "kind": row.kind.slug,
                    "votes": row.votes,
                    "weights": {metric.slug: w for metric, _, w in row.cells},
                    "counts": {metric.slug: n for metric, n, _ in row.cells},
                }
                for row in kind_weights(study)
            ]
        )

    # --- annotators: vetting -------------------------------------------------------------

    @extend_schema(request=None, responses={200: s.VettingItemSerializer, 204: NO_WORK})
    @action(detail=True, methods=["post"], url_path="vetting/next")
    def vetting_next(self, request: Request, pk=None) -> Response:
        """Your current vetting item, leased to you (claimed now if you hold none)."""
        study = self._study(pk, Role.ANNOTATOR)
        slot = vetting_next(study=study, annotator=request.user)
        if slot is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response(s.VettingItemSerializer(vetting_brief(slot)).data)

    @extend_schema(request=s.SkipSerializer, responses={204: None})
    @action(detail=True, methods=["post"], url_path="vetting/skip")
    def vetting_skip(self, request: Request, pk=None) -> Response:
        study = self._study(pk, Role.ANNOTATOR)
        data = _valid(s.SkipSerializer, request)
        vetting_skip(study=study, annotator=request.user, perturbation_id=data["perturbation"])
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(request=s.EditSerializer, responses={201: VersionSerializer})
    @action(detail=True, methods=["post"], url_path=r"perturbations/(?P<perturbation_pk>\d+)/edit")
    def edit(self, request: Request, pk=None, perturbation_pk=None) -> Response:
        """Save your correction of a perturbed text you hold or vetted, as a new version."""
        study = self._study(pk, Role.ANNOTATOR)
        data = _valid(s.EditSerializer, request)
        version = _refusals(
            lambda: perturbation_edit(
                study=study,
                annotator=request.user,
                perturbation_id=int(perturbation_pk),
                text=data["text"],
                note=data["note"],
            )
        )
        return Response(VersionSerializer(version).data, status=201)

    @extend_schema(
        methods=["post"],
        request=s.VettingInSerializer,
        responses={201: s.VettingSerializer, 200: s.VettingSerializer},
    )
    @extend_schema(methods=["get"], responses=s.VettingSerializer(many=True))
    @action(detail=True, methods=["get", "post"])
    def vettings(self, request: Request, pk=None) -> Response:
        """POST: save your verdict (annotators). GET: all vettings (researchers), yours
        (annotators)."""
        if request.method == "GET":
            study = self._study(pk, Role.RESEARCHER, Role.ANNOTATOR)
            rows = Vetting.objects.filter(study=study).select_related("annotator")
            return self._page(_own(rows, request.user, study, "annotator"), s.VettingSerializer)
        study = self._study(pk, Role.ANNOTATOR)
        data = _valid(s.VettingInSerializer, request)
        saved = _refusals(
            lambda: vetting_submit(
                study=study,
                annotator=request.user,
                perturbation_id=data["perturbation"],
                verdict=data["verdict"],
                note=data["note"],
                idempotency_key=data["idempotency_key"],
                based_on=data.get("based_on"),
            )
        )
        return _saved(saved, s.VettingSerializer)

    # --- annotators: comparisons ---------------------------------------------------------

    @extend_schema(request=None, responses={200: s.ComparisonItemSerializer, 204: NO_WORK})
    @action(detail=True, methods=["post"], url_path="comparisons/next")
    def comparison_next(self, request: Request, pk=None) -> Response:
        """Your next pair x criterion, texts in the order to show them."""
        study = self._study(pk, Role.ANNOTATOR)
        slot = comparison_next(study=study, annotator=request.user)
        if slot is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        item = comparison_item(
            study=study,
            annotator=request.user,
            perturbation_id=slot.perturbation_id,
            criterion_id=slot.criterion_id,
        )
        return Response(s.ComparisonItemSerializer(item).data)

    @extend_schema(request=s.SkipSerializer, responses={204: None})
    @action(detail=True, methods=["post"], url_path="comparisons/skip")
    def comparison_skip(self, request: Request, pk=None) -> Response:
        study = self._study(pk, Role.ANNOTATOR)
        data = _valid(s.SkipSerializer, request)
        if "criterion" not in data:
            raise ValidationError({"criterion": "required for a comparison skip"})
        comparison_skip(
            study=study,
            annotator=request.user,
            perturbation_id=data["perturbation"],
            criterion_id=data["criterion"],
        )
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(
        methods=["post"],
        request=s.ComparisonInSerializer,
        responses={201: s.ComparisonSerializer, 200: s.ComparisonSerializer},
    )
    @extend_schema(methods=["get"], responses=s.ComparisonSerializer(many=True))
    @action(detail=True, methods=["get", "post"])
    def comparisons(self, request: Request, pk=None) -> Response:
        """POST: save your choice about (first, second). GET: all comparisons (researchers),
        yours (annotators)."""
        if request.method == "GET":
            study = self._study(pk, Role.RESEARCHER, Role.ANNOTATOR)
            rows = Comparison.objects.filter(study=study).select_related("annotator")
            return self._page(_own(rows, request.user, study, "annotator"), s.ComparisonSerializer)
        study = self._study(pk, Role.ANNOTATOR)
        data = _valid(s.ComparisonInSerializer, request)
        saved = _refusals(
            lambda: comparison_submit(
                study=study,
                annotator=request.user,
                perturbation_id=data["perturbation"],
                criterion_id=data["criterion"],
                choice=data["choice"],
                original_first=data["original_first"],
                idempotency_key=data["idempotency_key"],
            )
        )
        return _saved(saved, s.ComparisonSerializer)

    # --- experts -------------------------------------------------------------------------

    @extend_schema(
        methods=["post"],
        request=s.ExpertVoteInSerializer,
        responses={201: s.ExpertVoteSerializer, 200: s.ExpertVoteSerializer},
    )
    @extend_schema(methods=["get"], responses=s.ExpertVoteSerializer(many=True))
    @action(detail=True, methods=["get", "post"], url_path="expert-votes")
    def expert_votes(self, request: Request, pk=None) -> Response:
        """POST: your vote for a kind's most affected metric (experts). GET: all votes
        (researchers), yours (experts)."""
        if request.method == "GET":
            study = self._study(pk, Role.RESEARCHER, Role.EXPERT)
            rows = ExpertVote.objects.filter(study=study).select_related(
                "expert", "task", "kind", "metric"
            )
            return self._page(_own(rows, request.user, study, "expert"), s.ExpertVoteSerializer)
        study = self._study(pk, Role.EXPERT)
        data = _valid(s.ExpertVoteInSerializer, request)
        saved = _refusals(
            lambda: expert_vote_submit(
                study=study,
                expert=request.user,
                kind_id=data["kind"],
                metric_id=data["metric"],
                idempotency_key=data["idempotency_key"],
            )
        )
        return _saved(saved, s.ExpertVoteSerializer)

    def _page(self, rows, serializer) -> Response:
        page = self.paginate_queryset(rows.order_by("id"))
        return self.get_paginated_response(serializer(page, many=True).data)


def _own(rows, user, study: Study, field: str):
    """Researchers see every row; anyone else only their own."""
    if study_role(user, study) == Role.RESEARCHER:
        return rows
    return rows.filter(**{field: user})


def _django_errors(call):
    """Run a service, turning Django's validation errors into the API's 400."""
    try:
        return call()
    except DjangoValidationError as exc:
        detail = exc.message_dict if hasattr(exc, "error_dict") else exc.messages
        raise ValidationError(detail) from exc


def _str(value) -> str | None:
    return None if value is None else str(value)
