"""Judging API: judges, strategy versions, judge runs (researchers only; a researcher sees
their own runs). Run actions: cancel, resume, again, calls, failures, export."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.db.models import Prefetch
from django.http import StreamingHttpResponse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError as ApiValidationError
from rest_framework.response import Response

from apps.accounts.permissions import IsOwnerOrReadOnly, IsResearcher
from apps.endpoints.spending import estimated_start
from apps.judging import selectors, services
from apps.judging.exporting import EXPORTS
from apps.judging.models import JudgeCall, JudgeShare
from apps.judging.serializers import (
    ConnectionTestRequestSerializer,
    ConnectionTestSerializer,
    JudgeCallSerializer,
    JudgeOfferSerializer,
    JudgeRunSerializer,
    JudgeSerializer,
    RunEstimateSerializer,
    StrategyRevisionSerializer,
    StrategySerializer,
)
from apps.judging.services import STRATEGY_FIELDS
from apps.judging.services.connection_test import TEST_STRATEGY


def api_error(error: ValidationError) -> ApiValidationError:
    """A service's ValidationError as the API's 400, field by field."""
    return ApiValidationError(
        error.message_dict if hasattr(error, "error_dict") else error.messages
    )


class JudgeViewSet(mixins.CreateModelMixin, mixins.UpdateModelMixin, viewsets.ReadOnlyModelViewSet):
    """Judges a researcher can use; they change only their own (the shipped ones: nobody)."""

    serializer_class = JudgeSerializer
    permission_classes = [IsResearcher & IsOwnerOrReadOnly]
    owned = staticmethod(selectors.judges_owned_by)

    def get_queryset(self):
        shares = Prefetch("shares", JudgeShare.objects.select_related("user"))
        judges = selectors.judges_for_user(self.request.user)
        return judges.select_related("endpoint", "created_by").prefetch_related(shares)

    def perform_create(self, serializer):
        self._save(serializer)

    def perform_update(self, serializer):
        self._save(serializer)

    def _save(self, serializer):
        judge = serializer.instance or serializer.Meta.model()
        data = dict(serializer.validated_data)
        shared_with = data.pop("shared_with", None)
        endpoint = data.pop("endpoint", {})
        for name, value in data.items():
            setattr(judge, name, value)
        try:
            saved = services.judge_save(
                judge=judge, user=self.request.user, shared_with=shared_with, endpoint=endpoint
            )
        except ValidationError as error:
            raise api_error(error) from error
        serializer.instance = self.get_queryset().get(pk=saved.pk)  # its shares as they are now

    @extend_schema(request=ConnectionTestRequestSerializer, responses=ConnectionTestSerializer)
    @action(detail=False, methods=["post"], url_path="test-connection")
    def test_connection(self, request):
        """One real call to an endpoint as it would be saved, with a strategy's sample prompt:
        the reply, how it is read and the latency (200 with ok false when the call failed).
        Nothing is saved."""
        form = ConnectionTestRequestSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = dict(form.validated_data)
        strategies = selectors.strategies_for_user(request.user)
        strategy = data.pop("strategy", None) or strategies.filter(slug=TEST_STRATEGY).first()
        if strategy is None or not strategies.filter(pk=strategy.pk).exists():
            raise ApiValidationError({"strategy": ["no such strategy"]})
        try:
            test = services.judge_connection_test(
                user=request.user, settings=data, strategy=strategy
            )
        except ValidationError as error:
            raise api_error(error) from error
        return Response(ConnectionTestSerializer(test.as_dict()).data)


class JudgeOfferViewSet(viewsets.ReadOnlyModelViewSet):
    """Judges offered to you that you have not accepted yet (nobody else's offers): accept one
    to see and use it, decline it to remove the offer."""

    serializer_class = JudgeOfferSerializer
    permission_classes = [IsResearcher]

    def get_queryset(self):
        return selectors.judge_offers_for(self.request.user).order_by("offered_at", "id")

    @extend_schema(request=None, responses=JudgeSerializer)
    @action(detail=True, methods=["post"])
    def accept(self, request, pk=None):
        """Accept the offer: the judge (and its endpoint) is yours to use, read-only."""
        share = services.judge_share_accept(share=self.get_object(), user=request.user)
        return Response(JudgeSerializer(share.judge).data)

    @extend_schema(request=None, responses={204: None})
    @action(detail=True, methods=["post"])
    def decline(self, request, pk=None):
        """Decline the offer: it is removed, and the judge stays out of your lists."""
        services.judge_share_decline(share=self.get_object(), user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class StrategyViewSet(mixins.CreateModelMixin, viewsets.ReadOnlyModelViewSet):
    """Latest versions by default; ``?all_versions=1`` lists every version. A researcher
    revises only their own strategies."""

    serializer_class = StrategySerializer
    permission_classes = [IsResearcher & IsOwnerOrReadOnly]
    owned = staticmethod(selectors.strategies_owned_by)

    def get_queryset(self):
        every = self.action != "list" or self.request.query_params.get("all_versions") == "1"
        strategies = selectors.strategies_for_user(self.request.user, latest=not every)
        return strategies.order_by("family", "slug", "-version")

    def perform_create(self, serializer):
        data = dict(serializer.validated_data)
        slug = data.pop("slug")
        try:
            serializer.instance = services.strategy_create(
                slug=slug, user=self.request.user, **data
            )
        except ValidationError as error:
            raise api_error(error) from error

    @extend_schema(request=StrategyRevisionSerializer, responses=StrategySerializer)
    @action(detail=True, methods=["post"])
    def revise(self, request, pk=None):
        """Save changes as a new version; the version revised stays as it was."""
        form = StrategyRevisionSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        changes = {k: v for k, v in form.validated_data.items() if k in STRATEGY_FIELDS}
        try:
            revised = services.strategy_revise(
                strategy=self.get_object(),
                user=request.user,
                note=form.validated_data.get("note", ""),
                **changes,
            )
        except ValidationError as error:
            raise api_error(error) from error
        return Response(StrategySerializer(revised).data, status=status.HTTP_201_CREATED)


class JudgeRunViewSet(mixins.CreateModelMixin, viewsets.ReadOnlyModelViewSet):
    """A researcher's own runs; cancel, resume and again change them."""

    serializer_class = JudgeRunSerializer
    permission_classes = [IsResearcher & IsOwnerOrReadOnly]
    owned = staticmethod(selectors.runs_for_user)

    def get_queryset(self):
        return selectors.runs_for_user(self.request.user).prefetch_related(
            "criteria", "metrics", "kinds"
        )

    def create(self, request, *args, **kwargs):
        """Record and start a run. An LLM judge's run is estimated first: ``dry_run`` answers
        with the estimate alone (200, nothing recorded), and a run above the study's limit
        without ``confirm`` is refused (400, with the estimate; nothing recorded)."""
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        dry_run, confirmed = data.pop("dry_run"), data.pop("confirm")
        batch = {
            "batch": data.pop("batch_mode", False),
            "live_fallback": data.pop("batch_live_fallback", False),
        }
        if data["judge"].is_metric:  # calls no model
            run = self._create(data, start=True)
            return Response(self.get_serializer(run).data, status=status.HTTP_201_CREATED)
        return estimated_start(
            record=lambda: self._create(data, start=False),
            estimate=_run_estimate,
            start=lambda run: services.judge_run_confirm(run=run, confirmed=confirmed, **batch),
            answer=lambda run: self.get_serializer(run).data,
            dry_run=dry_run,
        )

    def _create(self, data, *, start: bool):
        try:  # the service refuses a judge, strategy, study or dataset the user cannot reach
            return services.judge_run_create(user=self.request.user, start=start, **data)
        except ValidationError as error:
            raise api_error(error) from error

    @extend_schema(responses=RunEstimateSerializer)
    @action(detail=True, methods=["get"])
    def estimate(self, request, pk=None):
        """What starting this (pending) run would send: calls, cache, requests, tokens, cost."""
        estimate = services.judge_run_estimate(self.get_object())
        return Response(RunEstimateSerializer(estimate.as_dict()).data)

    @action(detail=True, methods=["post"])
    def start(self, request, pk=None):
        """Start a pending run after its estimate (confirm=true above the study's limit;
        batch=true through the judge's batch interface, live_fallback=true to ask live what
        the batch leaves unanswered)."""
        flags = {
            name: str(request.data.get(name, "")).lower() in ("1", "true")
            for name in ("confirm", "batch", "live_fallback")
        }
        try:
            run = services.judge_run_confirm(
                run=self.get_object(),
                confirmed=flags["confirm"],
                batch=flags["batch"],
                live_fallback=flags["live_fallback"],
            )
        except ValidationError as error:
            raise api_error(error) from error
        return Response(JudgeRunSerializer(run).data)

    @action(detail=True, methods=["post"])
    def cancel(self, request, pk=None):
        run = services.judge_run_cancel(run=self.get_object())
        return Response(JudgeRunSerializer(run).data)

    @extend_schema(parameters=[OpenApiParameter("retry_failed", bool)])
    @action(detail=True, methods=["post"])
    def resume(self, request, pk=None):
        """Continue a cancelled, failed or stalled run (retry_failed=true: failed calls too)."""
        retry = str(request.query_params.get("retry_failed", request.data.get("retry_failed", "")))
        run = services.judge_run_resume(
            run=self.get_object(), retry_failed=retry.lower() in ("1", "true")
        )
        return Response(JudgeRunSerializer(run).data)

    @action(detail=True, methods=["post"])
    def again(self, request, pk=None):
        """A new run with the same judge, strategy version and selection (served from cache)."""
        before = self.get_object()
        if before.judge.is_metric:
            run = services.judge_run_rerun(run=before, user=request.user)
            return Response(JudgeRunSerializer(run).data, status=status.HTTP_201_CREATED)
        confirmed = str(request.data.get("confirm", "")).lower() in ("1", "true")
        return estimated_start(  # estimated like a new run: above the limit, confirm
            record=lambda: services.judge_run_rerun(run=before, user=request.user, start=False),
            estimate=_run_estimate,
            start=lambda run: services.judge_run_confirm(run=run, confirmed=confirmed),
            answer=lambda run: JudgeRunSerializer(run).data,
        )

    @extend_schema(responses=JudgeCallSerializer(many=True))
    @action(detail=True, methods=["get"])
    def calls(self, request, pk=None):
        calls = JudgeCall.objects.filter(run=self.get_object()).order_by("id")
        if parse_status := request.query_params.get("parse_status"):
            calls = calls.filter(parse_status=parse_status)
        page = self.paginate_queryset(calls)
        return self.get_paginated_response(JudgeCallSerializer(page, many=True).data)

    @action(detail=True, methods=["get"])
    def failures(self, request, pk=None):
        """What failed and why: errors and unparsed replies grouped by reason."""
        return Response(selectors.run_failures(self.get_object()))

    @extend_schema(
        parameters=[OpenApiParameter("file_format", enum=list(EXPORTS))],
        responses={(200, "application/x-ndjson"): bytes, (200, "text/csv"): bytes},
    )
    @action(detail=True, methods=["get"])
    def export(self, request, pk=None):
        """Every call of the run, one row each (JSONL by default, or CSV)."""
        run = self.get_object()
        file_format = request.query_params.get("file_format", "jsonl")
        if file_format not in EXPORTS:
            return Response({"file_format": f"use one of {', '.join(EXPORTS)}"}, status=400)
        writer, content_type = EXPORTS[file_format]
        response = StreamingHttpResponse(writer(run), content_type=content_type)
        response["Content-Disposition"] = f'attachment; filename="judge-run-{run.pk}.{file_format}"'
        return response


def _run_estimate(run: Any) -> dict[str, Any]:
    return RunEstimateSerializer(services.judge_run_estimate(run).as_dict()).data
