"""Adversarial search API (researchers; a search is its owner's): set up, read, cancel,
resume, and the items and trajectories (docs/api.md)."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from apps.accounts.permissions import IsOwnerOrReadOnly, IsResearcher
from apps.endpoints.spending import estimated_start
from apps.judging import search_selectors as selectors
from apps.judging import services
from apps.judging.api import api_error
from apps.judging.models import Candidate, SearchItem, SearchIteration
from apps.judging.search_serializers import (
    CandidateSerializer,
    IterationSerializer,
    SearchCreateSerializer,
    SearchDetailSerializer,
    SearchEstimateSerializer,
    SearchItemSerializer,
    SearchSerializer,
)
from apps.judging.services.search_start import waits_for_start


class AdversarialSearchViewSet(mixins.CreateModelMixin, viewsets.ReadOnlyModelViewSet):
    """A researcher's own searches; cancel and resume change them."""

    serializer_class = SearchSerializer
    permission_classes = [IsResearcher & IsOwnerOrReadOnly]
    owned = staticmethod(selectors.searches_for_user)

    def get_queryset(self):
        return selectors.searches_for_user(self.request.user).prefetch_related("judges")

    @extend_schema(request=SearchCreateSerializer, responses={201: SearchSerializer})
    def create(self, request, *args, **kwargs):
        """Set up a search and start it in the workers, after its estimate: ``dry_run``
        answers with the estimate alone (200, nothing recorded), and a search above the
        study's limit without ``confirm`` is refused (400, with the estimate; nothing
        recorded)."""
        form = SearchCreateSerializer(data=request.data, context={"request": request})
        form.is_valid(raise_exception=True)
        dry_run, confirmed = form.validated_data["dry_run"], form.validated_data["confirm"]

        def record() -> Any:
            try:
                return services.adversarial_search_create(
                    user=request.user, setup=form.setup(), start=False
                )
            except ValidationError as error:
                raise api_error(error) from error

        return estimated_start(
            record=record,
            estimate=lambda search: (
                SearchEstimateSerializer(
                    services.adversarial_search_estimate(search).as_dict()
                ).data
            ),
            start=lambda search: services.adversarial_search_confirm(
                search=search, confirmed=confirmed
            ),
            answer=lambda search: SearchSerializer(search).data,
            dry_run=dry_run,
        )

    @extend_schema(responses=SearchEstimateSerializer)
    @action(detail=True, methods=["get"])
    def estimate(self, request, pk=None):
        """What starting this (not started) search would send: calls, cache, requests (at
        most), tokens, cost, per role and in all."""
        estimate = services.adversarial_search_estimate(self.get_object())
        return Response(SearchEstimateSerializer(estimate.as_dict()).data)

    @action(detail=True, methods=["post"])
    def start(self, request, pk=None):
        """Start a search not started yet, after its estimate (confirm=true above the study's
        limit)."""
        confirmed = str(request.data.get("confirm", "")).lower() in ("1", "true")
        try:
            search = services.adversarial_search_confirm(
                search=self.get_object(), confirmed=confirmed
            )
        except ValidationError as error:
            raise api_error(error) from error
        return Response(SearchSerializer(search).data)

    @action(detail=True, methods=["post"])
    def cancel(self, request, pk=None):
        """Stop the search; a resume continues from the last finished step."""
        search = services.adversarial_search_cancel(search=self.get_object())
        return Response(SearchSerializer(search).data)

    @action(detail=True, methods=["post"])
    def resume(self, request, pk=None):
        """Continue a cancelled, failed or stalled search from its last finished step (one
        never started starts from its estimate: ``start``)."""
        search = self.get_object()
        if waits_for_start(search):
            refused = ValidationError({"search": "this search has not started: start it (start/)"})
            raise api_error(refused)
        search = services.adversarial_search_resume(search=search)
        return Response(SearchSerializer(search).data)

    @extend_schema(responses=SearchDetailSerializer)
    def retrieve(self, request, *args, **kwargs):
        """The search, with how many of each method's items have a result, and why the
        others have none (generator replies with no candidate, unscored candidates...)."""
        search = self.get_object()
        outcomes = selectors.method_summaries(selectors.search_items(search))
        return Response(SearchDetailSerializer(search, context={"outcomes": outcomes}).data)

    @extend_schema(responses=SearchItemSerializer(many=True))
    @action(detail=True, methods=["get"])
    def items(self, request, pk=None):
        """Every item and method with its state, counts, best text so far, and whether it
        has a result (and if not, why)."""
        items = selectors.search_items(self.get_object())
        return Response(SearchItemSerializer(items, many=True).data)

    @extend_schema(
        parameters=[OpenApiParameter("item", int, description="A search item id (see items).")],
        responses=IterationSerializer(many=True),
    )
    @action(detail=True, methods=["get"])
    def iterations(self, request, pk=None):
        """Every iteration of one search item, in order, with the generator's raw reply and
        its format retry (also when no candidate could be read from them)."""
        item = self._item(request)
        iterations = SearchIteration.objects.filter(search_item=item).order_by("number")
        return Response(IterationSerializer(iterations, many=True).data)

    @extend_schema(
        parameters=[OpenApiParameter("item", int, description="A search item id (see items).")],
        responses=CandidateSerializer(many=True),
    )
    @action(detail=True, methods=["get"])
    def trajectory(self, request, pk=None):
        """Every candidate of one search item, in order, with its scores."""
        item = self._item(request)
        candidates = (
            Candidate.objects.filter(search_item=item)
            .select_related("iteration")
            .order_by("iteration__number", "index")
        )
        return Response(CandidateSerializer(candidates, many=True).data)

    def _item(self, request) -> SearchItem:
        """The search item named by ``?item=`` (404 if it is not this search's)."""
        search = self.get_object()
        return get_object_or_404(
            SearchItem, search=search, pk=_int(request.query_params.get("item"))
        )


def _int(value: object) -> int:
    try:
        return int(str(value))
    except ValueError:
        return 0
