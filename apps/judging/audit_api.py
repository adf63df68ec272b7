"""Judge audit API (researchers; an audit is its owner's): plan with the estimate, start,
cancel, resume, read with live progress (docs/audit.md, docs/api.md)."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from apps.accounts.permissions import IsOwnerOrReadOnly, IsResearcher
from apps.judging import audit_selectors as selectors
from apps.judging.api import api_error
from apps.judging.audit_serializers import AuditCreateSerializer, AuditSerializer
from apps.judging.services import audits


class JudgeAuditViewSet(mixins.CreateModelMixin, viewsets.ReadOnlyModelViewSet):
    """A researcher's own audits; start, cancel and resume act on the whole battery."""

    serializer_class = AuditSerializer
    permission_classes = [IsResearcher & IsOwnerOrReadOnly]
    owned = staticmethod(selectors.audits_for_user)

    def get_queryset(self):
        return selectors.audits_for_user(self.request.user).prefetch_related(
            "subjects__parts__run", "subjects__parts__baseline", "subjects__parts__search"
        )

    def get_object(self):
        return audits.audit_refresh(super().get_object())

    @extend_schema(request=AuditCreateSerializer, responses={201: AuditSerializer})
    def create(self, request, *args, **kwargs):
        """Plan an audit and estimate it; it starts only with ``start`` true (or ``start/``)."""
        form = AuditCreateSerializer(data=request.data, context={"request": request})
        form.is_valid(raise_exception=True)
        data = form.validated_data
        try:
            audit = audits.audit_plan(
                owner=request.user,
                study=data["study"],
                dataset=data["dataset"],
                subjects=[(s["judge"], s.get("strategy")) for s in data["subjects"]],
                search_budget=data["search_budget"],
                generator=data["generator"],
                gold_judge=data["gold_judge"],
                label=data["label"],
                vetted_only=data.get("vetted_only"),
            )
        except ValidationError as error:
            raise api_error(error) from error
        if data["start"]:
            try:
                audit = audits.audit_start(audit=audit, confirmed=data["confirm"])
            except ValidationError as error:  # planned, pending: start it with confirm
                body = error.message_dict | {"audit": AuditSerializer(audit).data}
                return Response(body, status=status.HTTP_400_BAD_REQUEST)
        return Response(AuditSerializer(audit).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=None)
    @action(detail=True, methods=["post"])
    def start(self, request, pk=None):
        """Queue every run and search of the battery (``confirm``: true when its estimate is
        above the study's limit of HTTP requests; ``batch``: true to send the runs whose judges
        have a batch interface through it, ``live_fallback``: true to ask live what a batch
        leaves unanswered)."""
        flags = {
            name: str(request.data.get(name, "")).lower() in ("1", "true")
            for name in ("confirm", "batch", "live_fallback")
        }
        try:
            audit = audits.audit_start(
                audit=self.get_object(),
                confirmed=flags["confirm"],
                batch=flags["batch"],
                live_fallback=flags["live_fallback"],
            )
        except ValidationError as error:
            raise api_error(error) from error
        return Response(AuditSerializer(audit).data)

    @extend_schema(request=None)
    @action(detail=True, methods=["post"])
    def cancel(self, request, pk=None):
        """Stop every part; a resume continues from there."""
        return Response(AuditSerializer(audits.audit_cancel(audit=self.get_object())).data)

    @extend_schema(request=None)
    @action(detail=True, methods=["post"])
    def resume(self, request, pk=None):
        """Continue every part not done (failed calls are asked again)."""
        return Response(AuditSerializer(audits.audit_resume(audit=self.get_object())).data)
