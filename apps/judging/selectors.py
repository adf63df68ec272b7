"""Judging reads that depend on who asks. Judging is for researchers: annotators and experts
reach no judge, strategy or run. A researcher reads their own judges and strategies and the
shipped ones (no owner: read-only for everyone), and reaches only the runs they created; they
change only their own (``*_owned_by``, see apps.accounts.permissions)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from typing import Any

from django.db.models import Avg, Count, F, Q, QuerySet
from django.utils import timezone

from apps.accounts.permissions import is_researcher, owned_by
from apps.judging.models import (
    CallBatch,
    Judge,
    JudgeCall,
    JudgeRun,
    JudgeShare,
    ParseStatus,
    RunStatus,
    Strategy,
)

RATE_WINDOW_S = 10


def judges_for_user(user: Any) -> QuerySet[Judge]:
    """Judges this researcher may see and use (see JudgeQuerySet.for_user)."""
    return Judge.objects.for_user(user)


def judges_owned_by(user: Any) -> QuerySet[Judge]:
    """Judges this user may change: their own."""
    return owned_by(Judge.objects.all(), user, "created_by")


def judge_offers_for(user: Any) -> QuerySet[JudgeShare]:
    """Judges offered to this researcher that they have not accepted yet (nobody else's
    offers: a superuser too sees only their own)."""
    if not is_researcher(user):
        return JudgeShare.objects.none()
    return (
        JudgeShare.objects.offered()
        .filter(user=user)
        .select_related("judge__endpoint", "judge__created_by")
    )


def _slugs_created_by(user: Any) -> QuerySet[Strategy, Any]:
    """A strategy (every version of a slug) belongs to whoever created its first version."""
    return Strategy.objects.filter(version=1, created_by=user).values("slug")


def strategies_for_user(user: Any, *, latest: bool = True) -> QuerySet[Strategy]:
    """Their own strategies and the shipped ones (first version with no owner)."""
    if not is_researcher(user):
        return Strategy.objects.none()
    strategies = Strategy.objects.all()
    if not user.is_superuser:
        strategies = strategies.filter(
            Q(slug__in=_slugs_created_by(user)) | Q(slug__in=_slugs_created_by(None))
        )
    return strategies.latest_versions() if latest else strategies


def strategies_owned_by(user: Any) -> QuerySet[Strategy]:
    """Strategy versions this user may revise: of the strategies they created."""
    if not is_researcher(user):
        return Strategy.objects.none()
    if user.is_superuser:
        return Strategy.objects.all()
    return Strategy.objects.filter(slug__in=_slugs_created_by(user))


def runs_for_user(user: Any) -> QuerySet[JudgeRun]:
    if not is_researcher(user):
        return JudgeRun.objects.none()
    runs = JudgeRun.objects.select_related("judge__endpoint", "strategy", "study", "dataset")
    return runs if user.is_superuser else runs.filter(created_by=user)


def calls_for_export(run: JudgeRun) -> QuerySet[JudgeCall]:
    return (
        JudgeCall.objects.filter(run=run)
        .select_related("item", "perturbation__kind", "criterion__aspect", "metric")
        .order_by("id")
    )


@dataclass
class Progress:
    run: JudgeRun
    calls_per_second: float
    cost: Decimal | None
    projected_cost: Decimal | None
    elapsed_s: float | None


def run_progress(run: JudgeRun) -> Progress:
    """Figures for the live progress bar (two queries)."""
    now = timezone.now()
    if run.status == RunStatus.RUNNING:
        since = now - timedelta(seconds=RATE_WINDOW_S)
        recent = JudgeCall.objects.filter(run=run, finished_at__gte=since).count()
        rate = recent / RATE_WINDOW_S
    else:
        spent = ((run.finished_at or now) - (run.started_at or now)).total_seconds()
        rate = run.completed / spent if spent > 0 else 0.0
    elapsed = (
        ((run.finished_at or now) - run.started_at).total_seconds() if run.started_at else None
    )
    cost = run.estimated_cost
    paid = run.completed - run.cached
    projected = None
    if cost is not None and paid > 0 and run.total:
        projected = cost * (run.total - run.cached) / paid
    return Progress(run, rate, cost, projected, elapsed)


def run_failures(run: JudgeRun, limit: int = 50) -> dict[str, list[dict[str, Any]]]:
    """What failed and why: errors and unparsed replies, grouped by reason, most common first."""
    calls = JudgeCall.objects.filter(run=run)
    errors = (
        calls.filter(parse_status=ParseStatus.ERROR)
        .values("error_kind", "error")
        .annotate(n=Count("id"))
        .order_by("-n", "error_kind")[:limit]
    )
    unparsed = (
        calls.filter(parse_status=ParseStatus.UNPARSED)
        .values("parse_reason")
        .annotate(n=Count("id"))
        .order_by("-n")[:limit]
    )
    return {"errors": [dict(e) for e in errors], "unparsed": [dict(u) for u in unparsed]}


def run_scores(run: JudgeRun, limit: int = 300) -> list[dict[str, Any]]:
    """Mean score over samples per text and quality; pairwise: preferences counted."""
    rows = (
        JudgeCall.objects.filter(run=run)
        .values(
            "item__external_id",
            "perturbation_id",
            "perturbation__kind__name",
            "criterion__key",
            "metric__slug",
        )
        .annotate(
            mean=Avg("score", filter=Q(parse_status=ParseStatus.PARSED)),
            scored=Count("id", filter=Q(parse_status=ParseStatus.PARSED)),
            calls=Count("id"),
            original=Count("id", filter=Q(preferred="original")),
            perturbed=Count("id", filter=Q(preferred="perturbed")),
            tie=Count("id", filter=Q(preferred="tie")),
        )
        .order_by(
            "item__external_id",
            F("perturbation_id").asc(nulls_first=True),  # the original first
            "criterion__key",
            "metric__slug",
        )
    )
    return [dict(row) for row in rows[:limit]]


def run_batches(run: JudgeRun) -> list[CallBatch]:
    """A batch-mode run's batches, oldest first (what the run page says of each)."""
    return list(CallBatch.objects.filter(run=run).order_by("id"))
