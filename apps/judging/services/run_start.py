"""Nobody spends by surprise: an LLM judge run shows its estimate before it starts, and one
above the study's limit starts only when confirmed (docs/judging.md, "Before a run starts").

The run is recorded and planned (its calls listed, as the worker would), then estimated the
way an audit is (``audit_estimate.run_estimate``: the cache counted, tokens from the prompts
and the judge's past replies, the cost from the judge's prices). Metric judges call no model:
their runs start at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction

from apps.judging.models import AdversarialSearch, JudgeAudit, JudgeRun, RunStatus
from apps.judging.planning import UNVETTED
from apps.judging.services.audit_estimate import run_estimate
from apps.judging.services.runs import judge_run_start
from apps.judging.services.work import judge_run_plan


@dataclass(frozen=True)
class RunEstimate:
    """What starting a planned run would do: calls, the cache's share, HTTP requests, tokens,
    cost, what was left out and the limit above which it asks to be confirmed."""

    calls: int
    cached_calls: int
    http_calls: int
    prompt_tokens: int
    completion_tokens: int
    completion_source: str
    cost: Decimal | None
    batch_cost: Decimal | None  # through the batch interface (None: no prices)
    batch_problem: str  # why it cannot go through the batch interface ("": it can)
    limit: int
    left_out: list[dict[str, Any]]

    @property
    def over_limit(self) -> bool:
        return self.http_calls > self.limit

    @property
    def nothing(self) -> str:
        """Why the run would measure nothing ("" when it measures something)."""
        if self.calls:
            return ""
        reasons = "; ".join(f"{p['count']} {p['reason']}" for p in self.left_out)
        return "the selection has no texts to judge" + (f": {reasons}" if reasons else "")

    @property
    def unvetted(self) -> int:
        """Perturbations left out because they are not vetted (choosing all takes them)."""
        return sum(p["count"] for p in self.left_out if p["reason"] == UNVETTED)

    def as_dict(self) -> dict[str, Any]:
        fields = {name: getattr(self, name) for name in self.__dataclass_fields__}
        for name in ("cost", "batch_cost"):
            value = fields[name]
            fields[name] = None if value is None else str(round(value, 4))
        return fields | {"over_limit": self.over_limit, "nothing": self.nothing}


def confirm_limit(run: JudgeRun | AdversarialSearch | JudgeAudit) -> int:
    """HTTP requests above which a run (an adversarial search, an audit) asks to be
    confirmed: its study's, else the server's."""
    study_limit = run.study.confirm_above_requests if run.study is not None else None
    return settings.DISCERN_CONFIRM_ABOVE_REQUESTS if study_limit is None else study_limit


def needs_estimate(run: JudgeRun) -> bool:
    """A run that calls a model: an LLM judge's (a metric judge's costs nothing)."""
    return not run.judge.is_metric


def judge_run_estimate(run: JudgeRun) -> RunEstimate:
    """Plan the run (once) and estimate what starting it would send."""
    run = judge_run_plan(run_id=run.pk)
    figures = run_estimate(run, set())
    return RunEstimate(
        calls=figures["calls"],
        cached_calls=figures["cached_calls"],
        http_calls=figures["http_calls"],
        prompt_tokens=figures["prompt_tokens"],
        completion_tokens=figures["completion_tokens"],
        completion_source=figures.get("completion_source", ""),
        cost=run.judge.cost(figures["prompt_tokens"], figures["completion_tokens"]),
        batch_cost=run.judge.batch_cost(figures["prompt_tokens"], figures["completion_tokens"]),
        batch_problem=run.judge.batch_problem(run.strategy),
        limit=confirm_limit(run),
        left_out=list(run.problems or []),
    )


@transaction.atomic
def judge_run_confirm(
    *, run: JudgeRun, confirmed: bool, batch: bool = False, live_fallback: bool = False
) -> JudgeRun:
    """Start a planned run after its estimate: refused when it would measure nothing, or when
    it is above the limit and not ``confirmed``. ``batch``: through the judge's batch
    interface (``live_fallback``: what a batch leaves unanswered is asked live)."""
    estimate = judge_run_estimate(run)
    if estimate.nothing:
        raise ValidationError({"run": f"nothing to start: {estimate.nothing}"})
    if batch and estimate.batch_problem:
        raise ValidationError({"batch": f"not as a batch: {estimate.batch_problem}"})
    run.refresh_from_db()
    if run.status != RunStatus.PENDING:
        raise ValidationError({"run": f"this run is {run.get_status_display().lower()} already"})
    if estimate.over_limit and not confirmed:
        raise ValidationError(
            {
                "confirm": f"this run would send {estimate.http_calls} requests to the model, "
                f"above the limit of {estimate.limit}: confirm to start it"
            }
        )
    JudgeRun.objects.filter(pk=run.pk).update(
        batch_mode=batch, batch_live_fallback=batch and live_fallback
    )
    run.batch_mode, run.batch_live_fallback = batch, batch and live_fallback
    return judge_run_start(run=run)
