"""Improving an audited judge (docs/improve.md): started from its report card, followed on its
own page (the estimate, Start, progress, the result, Adopt), downloaded as JSON; and the same
through the API. The planning pulls in the cards' statistics (numpy, scipy): imported when
first used, never by the URL conf."""

from __future__ import annotations

import json
from typing import Any

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ValidationError as ApiValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.accounts.permissions import IsResearcher, allow
from apps.accounts.requests import AuthedRequest
from apps.analysis.improving.snapshot import improvement_json, page_rows
from apps.analysis.selectors import audit_owned
from apps.judging.api import api_error
from apps.judging.models import AuditSubject, Improvement, JudgeAudit, RunStatus
from apps.judging.selectors import strategies_for_user


def improvable(user: Any, subject: AuditSubject) -> list:
    """The researcher's own strategies that may join as candidates (they score one text)."""
    mine = strategies_for_user(user).filter(created_by=user, family__in=["single", "prompting"])
    return [s for s in mine if "{{expert_rating}}" not in s.prompt_template]


def _improvement(user: Any, pk: int) -> Improvement:
    found = Improvement.objects.for_user(user).select_related(
        "subject__judge", "subject__strategy", "subject__audit", "adopted"
    )
    return get_object_or_404(found, pk=pk)


def _problems(error: ValidationError) -> str:
    return " ".join(m for ms in error.message_dict.values() for m in ms)


@allow(IsResearcher)
@require_POST
def improvement_new(request: AuthedRequest, pk: int, subject_pk: int) -> HttpResponse:
    """Plan an improvement of the card's judge: its estimate comes first."""
    audit = audit_owned(request.user, pk)
    subject = get_object_or_404(AuditSubject, audit=audit, pk=subject_pk)
    chosen = {int(v) for v in request.POST.getlist("strategies") if v.isdigit()}
    strategies = [s for s in improvable(request.user, subject) if s.pk in chosen]
    budget = request.POST.get("budget", "").strip()
    seed = request.POST.get("seed", "").strip()
    if (budget and not budget.isdigit()) or (seed and not seed.isdigit()):
        messages.error(request, "The budget and the seed are whole numbers (or left empty).")
        return redirect("audit-card", pk=audit.pk, subject_pk=subject.pk)
    from apps.analysis.improving.plan import improvement_plan

    try:
        improvement = improvement_plan(
            owner=request.user,
            subject=subject,
            strategies=strategies,
            budget_requests=int(budget) if budget else None,
            seed=int(seed) if seed else 0,
        )
    except ValidationError as error:
        messages.error(request, f"Not planned: {_problems(error)}")
        return redirect("audit-card", pk=audit.pk, subject_pk=subject.pk)
    return redirect("improvement-detail", pk=improvement.pk)


@allow(IsResearcher)
@require_GET
def improvement_detail(request: AuthedRequest, pk: int) -> HttpResponse:
    from apps.analysis.improving.plan import improvement_confirm_problem

    improvement = _improvement(request.user, pk)
    context = {
        "improvement": improvement,
        "data": improvement_json(improvement),
        **page_rows(improvement),
        "confirm": improvement_confirm_problem(improvement)
        if improvement.status == RunStatus.PENDING
        else "",
        "runs": improvement.runs(),
    }
    template = "analysis/improvement.html"
    if request.htmx:
        template += "#progress"
    return render(request, template, context)


@allow(IsResearcher)
@require_POST
def improvement_action(request: AuthedRequest, pk: int, action: str) -> HttpResponse:
    """Start (confirmed when over the limit), cancel or adopt."""
    improvement = _improvement(request.user, pk)
    if action not in ACTIONS:
        return HttpResponse("no such action", status=404)
    try:
        adopted = act(
            improvement,
            action,
            request.user,
            bool(request.POST.get("confirm")),
            batch=request.POST.get("mode") == "batch",
            live_fallback=request.POST.get("live_fallback") == "1",
        )
    except ValidationError as error:
        messages.error(request, _problems(error))
    else:
        if adopted is not None:
            messages.success(request, f"Adopted as a new strategy of yours: {adopted.name}.")
    return redirect("improvement-detail", pk=improvement.pk)


ACTIONS = ("start", "cancel", "adopt")


def act(
    improvement: Improvement,
    action: str,
    user: Any,
    confirmed: bool,
    *,
    batch: bool = False,
    live_fallback: bool = False,
) -> Any:
    """One action on an improvement; the strategy made when it is adopted."""
    from apps.analysis.improving.plan import (
        improvement_adopt,
        improvement_cancel,
        improvement_start,
    )

    if action == "start":
        improvement_start(
            improvement=improvement, confirmed=confirmed, batch=batch, live_fallback=live_fallback
        )
    elif action == "cancel":
        improvement_cancel(improvement=improvement)
    else:
        return improvement_adopt(improvement=improvement, user=user)
    return None


@allow(IsResearcher)
@require_GET
def improvement_file(request: AuthedRequest, pk: int) -> HttpResponse:
    improvement = _improvement(request.user, pk)
    response = HttpResponse(
        json.dumps(improvement_json(improvement), indent=2, sort_keys=True),
        content_type="application/json",
    )
    response["Content-Disposition"] = f'attachment; filename="improvement-{improvement.pk}.json"'
    return response


# -- the API -----------------------------------------------------------------------------------


class ImprovementRequest(serializers.Serializer):
    subject = serializers.IntegerField(help_text="The audited judge: its subject id.")
    strategies = serializers.ListField(
        child=serializers.IntegerField(),
        required=False,
        default=list,
        help_text="More candidates: ids of your own strategies that score one text.",
    )
    budget_requests = serializers.IntegerField(required=False, allow_null=True, min_value=1)
    seed = serializers.IntegerField(required=False, default=0, min_value=0)
    dry_run = serializers.BooleanField(required=False, default=False)


class ImprovementsView(APIView):
    """Your improvements; POST plans one (its estimate; nothing runs until started)."""

    permission_classes = [IsResearcher]

    @extend_schema(operation_id="improvements_list", responses=dict)
    def get(self, request):
        found = Improvement.objects.for_user(request.user).order_by("-id")[:100]
        return Response({"results": [improvement_json(i) for i in found]})

    @extend_schema(request=ImprovementRequest, responses={201: dict, 200: dict})
    def post(self, request):
        form = ImprovementRequest(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        audits = JudgeAudit.objects.for_user(request.user)
        subject = AuditSubject.objects.filter(pk=data["subject"], audit__in=audits).first()
        if subject is None:
            raise ApiValidationError({"subject": ["no such audited judge of yours"]})
        allowed = {s.pk: s for s in improvable(request.user, subject)}
        unknown = [pk for pk in data["strategies"] if pk not in allowed]
        if unknown:
            raise ApiValidationError({"strategies": [f"not yours to try: {unknown}"]})
        from apps.analysis.improving.plan import improvement_plan

        with transaction.atomic():
            try:
                improvement = improvement_plan(
                    owner=request.user,
                    subject=subject,
                    strategies=[allowed[pk] for pk in data["strategies"]],
                    budget_requests=data.get("budget_requests"),
                    seed=data["seed"],
                )
            except ValidationError as error:
                raise api_error(error) from error
            answer = improvement_json(improvement)
            if data["dry_run"]:
                transaction.set_rollback(True)
                return Response(answer, status=200)
        return Response(answer, status=201)


class ImprovementView(APIView):
    permission_classes = [IsResearcher]

    @extend_schema(responses=dict)
    def get(self, request, pk: int):
        return Response(improvement_json(_improvement(request.user, pk)))


class ImprovementActionView(APIView):
    """start (``confirm`` when its requests exceed the study's limit; ``batch`` to send its
    runs through the judge's batch interface, ``live_fallback`` to ask live what a batch
    leaves unanswered), cancel, adopt."""

    permission_classes = [IsResearcher]
    action_name = ""

    @extend_schema(request={"application/json": {"type": "object"}}, responses=dict)
    def post(self, request, pk: int):
        improvement = _improvement(request.user, pk)
        try:
            act(
                improvement,
                self.action_name,
                request.user,
                bool(request.data.get("confirm")),
                batch=bool(request.data.get("batch")),
                live_fallback=bool(request.data.get("live_fallback")),
            )
        except ValidationError as error:
            raise api_error(error) from error
        improvement.refresh_from_db()
        return Response(improvement_json(improvement))
