"""A running improvement moved on as its runs finish (docs/improve.md, "What it does").

Training: once every candidate's training run has finished, each is measured on the training
texts, and the best is chosen: the fewest blind spots (then the fewest errors missed), with no
loss of agreement with people. A best that does no better than the current strategy ends it
there. Confirmation: the current strategy and the best on the held-out texts, compared text
by text (McNemar's exact test on the texts' errors missed, as judges side by side are). The
best is recommended only when it misses significantly fewer errors there, without losing
agreement; either way the result says what closed, what opened and what agreement did.
"""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.db.models.functions import Now
from django.utils import timezone

from apps.analysis.cards.comparison import paired_test
from apps.analysis.formatting import format_value
from apps.analysis.improving.measure import DETECTION, failures_by_kind, measure, threshold_of
from apps.analysis.improving.plan import discard_unused
from apps.analysis.reports.base import rounded
from apps.analysis.reports.judge_data import run_scores
from apps.judging.models import Improvement, ImprovementCandidate, RunStatus, Stage
from apps.judging.services import judge_run_cancel, judge_run_start

ALPHA = 0.05
#: How long a worker waits before looking at a running improvement's runs again (runs sent
#: as batches are answered within hours: looked at less often).
WAIT_S = 2.0
BATCH_WAIT_S = 30.0


def improvement_wait_s(improvement_id: int) -> float:
    """Seconds until its runs are looked at again."""
    improvement = Improvement.objects.get(pk=improvement_id)
    batched = any(r.batch_mode and not r.finished for r in improvement.runs())
    return BATCH_WAIT_S if batched else WAIT_S


def improvement_advance(*, improvement_id: int) -> bool:
    """Move the improvement on; True while it waits for runs (look again later)."""
    improvement = Improvement.objects.select_related("subject__judge").get(pk=improvement_id)
    if improvement.status != RunStatus.RUNNING:
        return False
    Improvement.objects.filter(pk=improvement.pk).update(advanced_at=Now())
    candidates = list(improvement.candidates.select_related("train_run", "held_run"))
    if _over_budget(improvement):
        return _stop(improvement, candidates)
    if improvement.stage == Stage.TRAIN:
        return _train(improvement, candidates)
    return _confirm(improvement, candidates)


def _over_budget(improvement: Improvement) -> bool:
    cap = improvement.budget_requests
    return cap is not None and improvement.http_requests() >= cap


def _train(improvement: Improvement, candidates: list[ImprovementCandidate]) -> bool:
    if not all(c.train_run is None or c.train_run.finished for c in candidates):
        return True
    _measure_training(improvement, candidates)
    current = next(c for c in candidates if c.current)
    best = choose(current, [c for c in candidates if not c.current])
    if best is None:
        _finish(improvement, no_winner(improvement, current, candidates))
        return False
    with transaction.atomic():
        discard_unused(improvement, [current.pk, best.pk])
        for candidate in (current, best):
            candidate.refresh_from_db()
            if candidate.held_run is not None and candidate.held_run.status == RunStatus.PENDING:
                judge_run_start(run=candidate.held_run)
        improvement.stage = Stage.CONFIRM
        improvement.result = {"winner": best.pk, "winner_label": best.label}
        improvement.save(update_fields=["stage", "result"])
    return True


def _measure_training(improvement: Improvement, candidates: list[ImprovementCandidate]) -> None:
    train = set(improvement.train_items)
    for candidate in candidates:
        run = candidate.train_run
        if run is not None and run.status == RunStatus.DONE:
            candidate.train = measure(run, train, threshold_of(run))
        else:
            candidate.train = {"not_measured": _why_not(run)}
        candidate.save(update_fields=["train"])


def _why_not(run: Any) -> str:
    if run is None:
        return "nothing to judge"
    return f"its run {run.pk} is {run.get_status_display().lower()}" + (
        f": {run.error}" if run.error else ""
    )


def _spots(figures: dict[str, Any]) -> int:
    return len(figures.get("blind_spots", []))


def _missed(figures: dict[str, Any]) -> float:
    missed = figures.get("missed") or {}
    value = missed.get("value")
    return math.inf if value is None else float(value)


def loses_agreement(before: dict | None, after: dict | None) -> bool:
    """Agreement with people clearly lower: the new interval wholly below the old value."""
    if not before or not after or before.get("value") is None or after.get("ci_high") is None:
        return False
    return float(after["ci_high"]) < float(before["value"])


def choose(
    current: ImprovementCandidate, others: list[ImprovementCandidate]
) -> ImprovementCandidate | None:
    """The candidate with the fewest blind spots, then the fewest errors missed, that keeps
    agreement with people; None unless it does better than the current strategy."""
    measured = [c for c in others if "not_measured" not in c.train and c.train.get("missed")]
    kept = [
        c
        for c in measured
        if not loses_agreement(current.train.get("agreement"), c.train.get("agreement"))
    ]
    if not kept or "not_measured" in current.train:
        return None
    best = min(kept, key=lambda c: (_spots(c.train), _missed(c.train), c.pk))
    now = (_spots(current.train), _missed(current.train))
    return best if (_spots(best.train), _missed(best.train)) < now else None


def no_winner(
    improvement: Improvement,
    current: ImprovementCandidate,
    candidates: list[ImprovementCandidate],
) -> dict[str, Any]:
    tried = sum(1 for c in candidates if not c.current and "not_measured" not in c.train)
    return {
        "recommended": False,
        "headline": (
            "No candidate beats the current strategy: none of the "
            f"{tried} candidates missed fewer errors than it on the "
            f"{len(improvement.train_items)} training source items, so none was tried on the "
            "held-out ones."
        ),
        "blind_spots": current.train.get("blind_spots", []),
        "texts": _texts(improvement),
    }


def _texts(improvement: Improvement) -> dict[str, int]:
    return {"train": len(improvement.train_items), "held": len(improvement.held_items)}


def _confirm(improvement: Improvement, candidates: list[ImprovementCandidate]) -> bool:
    current = next(c for c in candidates if c.current)
    best = next(c for c in candidates if c.pk == improvement.result.get("winner"))
    runs = [current.held_run, best.held_run]
    if not all(run is not None and run.finished for run in runs):
        return True
    held = set(improvement.held_items)
    for candidate in (current, best):
        run = candidate.held_run
        assert run is not None
        candidate.held = (
            measure(run, held, threshold_of(run))
            if run.status == "done"
            else {"not_measured": _why_not(run)}
        )
        candidate.save(update_fields=["held"])
    _finish(improvement, confirmation(improvement, current, best))
    return False


def _test(units_before: dict, units_after: dict) -> dict[str, Any]:
    result = paired_test(DETECTION, per_text(units_before), per_text(units_after))
    return {
        "test": result.test,
        "n": result.n,
        "difference": rounded(result.difference),
        "ci_low": rounded(result.ci_low),
        "ci_high": rounded(result.ci_high),
        "p": None if math.isnan(result.p) else float(result.p),
    }


def confirmation(
    improvement: Improvement, current: ImprovementCandidate, best: ImprovementCandidate
) -> dict[str, Any]:
    """The best against the current strategy on the held-out texts."""
    texts = _texts(improvement)
    if "not_measured" in current.held or "not_measured" in best.held:
        why = current.held.get("not_measured") or best.held.get("not_measured")
        return {
            "recommended": False,
            "winner": best.pk,
            "winner_label": best.label,
            "headline": f"Not confirmed: the held-out runs did not finish ({why}).",
            "texts": texts,
        }
    held = set(improvement.held_items)
    assert current.held_run is not None and best.held_run is not None
    before = failures_by_kind(run_scores(current.held_run), held)
    after = failures_by_kind(run_scores(best.held_run), held)
    every = _test(_flat(before), _flat(after))
    kinds = []
    for kind in sorted(set(before) | set(after)):
        was, now = current.held["kinds"].get(kind, {}), best.held["kinds"].get(kind, {})
        kinds.append(
            {
                "kind": kind,
                "before": was,
                "after": now,
                "test": _test(before.get(kind, {}), after.get(kind, {})),
            }
        )
    closed = sorted(set(current.held["blind_spots"]) - set(best.held["blind_spots"]))
    opened = sorted(set(best.held["blind_spots"]) - set(current.held["blind_spots"]))
    agreement = {"before": current.held.get("agreement"), "after": best.held.get("agreement")}
    lost = loses_agreement(agreement["before"], agreement["after"])
    better = (every["difference"] or 0) > 0 and every["p"] is not None and every["p"] < ALPHA
    recommended = better and not lost
    return {
        "recommended": recommended,
        "winner": best.pk,
        "winner_label": best.label,
        "headline": _headline(best, recommended, lost, every, current.held, best.held, closed),
        "closed": closed,
        "opened": opened,
        "missed": {"before": current.held["missed"], "after": best.held["missed"], "test": every},
        "kinds": kinds,
        "agreement": agreement,
        "texts": texts,
    }


def _flat(by_kind: dict[str, dict]) -> dict:
    return {key: value for units in by_kind.values() for key, value in units.items()}


def per_text(units: dict) -> dict:
    """Each perturbed text's share of its criteria on which it was missed: two strategies
    compare text by text even when one scores each criterion and the other the whole text."""
    texts: dict = {}
    for (text, _), value in units.items():
        texts.setdefault(text, []).append(value)
    return {text: sum(values) / len(values) for text, values in texts.items()}


def _headline(best, recommended, lost, test, before, after, closed) -> str:
    was, now = (format_value(f["missed"]["value"]) for f in (before, after))
    p = format_value(test["p"], p_value=True)
    figures = f"errors missed on the held-out texts {was} → {now} ({test['test']}, p = {p}, "
    figures += f"N = {test['n']} texts)"
    if recommended:
        spots = f"closes {', '.join(closed)}" if closed else "closes no blind spot outright"
        return f"Adopt {best.label}: it {spots}; {figures}."
    reason = "it loses agreement with people" if lost else "the difference is not significant"
    return (
        f"No candidate beats the current strategy on held-out texts: {best.label} did better "
        f"on the training texts, but on the held-out ones {reason}; {figures}."
    )


def _stop(improvement: Improvement, candidates: list[ImprovementCandidate]) -> bool:
    """The budget is spent: stop every run, keep what was measured."""
    for run in improvement.runs():
        if run.status == RunStatus.RUNNING:
            judge_run_cancel(run=run)
    if improvement.stage == Stage.TRAIN:
        _measure_training(improvement, candidates)
    tried = sum(1 for c in candidates if "blind_spots" in c.train)
    _finish(
        improvement,
        {
            "recommended": False,
            "stopped": "budget",
            "headline": (
                f"Stopped at the budget of {improvement.budget_requests} requests: "
                f"{tried} of {len(candidates)} strategies measured on the training texts, none "
                "confirmed on the held-out ones."
            ),
            "texts": _texts(improvement),
        },
    )
    return False


def _finish(improvement: Improvement, result: dict[str, Any]) -> None:
    """Done, with its result; the held-out runs planned for the estimate and never started
    are removed."""
    with transaction.atomic():
        discard_unused(improvement, keep=())
        Improvement.objects.filter(pk=improvement.pk, status=RunStatus.RUNNING).update(
            status=RunStatus.DONE, stage=Stage.DONE, result=result, finished_at=timezone.now()
        )


def improvement_fail(*, improvement_id: int, error: str) -> None:
    Improvement.objects.filter(pk=improvement_id, status=RunStatus.RUNNING).update(
        status=RunStatus.FAILED, error=error[:5000], finished_at=timezone.now()
    )


def improvements_quiet() -> list[int]:
    """Running improvements no worker looked at for a minute (their task was lost)."""
    stale = timezone.now() - timedelta(seconds=60)
    running = Improvement.objects.filter(status=RunStatus.RUNNING)
    return list(running.filter(advanced_at__lt=stale).values_list("pk", flat=True))
