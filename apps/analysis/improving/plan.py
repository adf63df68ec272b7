"""Recording, starting, cancelling and adopting an improvement (docs/improve.md).

``improvement_plan`` splits the texts the card judged by source item (seeded), lists the
candidate strategies and plans every run: each candidate on the training half, and on the
held-out half the current strategy and each candidate (only the current one and the best
candidate's are ever started: the others are planned to be estimated, then removed). Its
estimate, as an audit's: calls, those the cache answers, the HTTP requests left, tokens and
cost, for the training runs and for the confirmation.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from apps.analysis.improving.measure import measure, threshold_of
from apps.corpus.models import Perturbation
from apps.judging import selectors
from apps.judging.models import (
    AuditPart,
    AuditSubject,
    Improvement,
    ImprovementCandidate,
    JudgeCall,
    JudgeRun,
    Origin,
    PartKind,
    RunStatus,
    Strategy,
)
from apps.judging.planning import vetted
from apps.judging.services import (
    judge_run_cancel,
    judge_run_create,
    judge_run_plan,
    judge_run_start,
)
from apps.judging.services.audit_estimate import KEYS, run_estimate
from apps.judging.services.judges import STRATEGY_FIELDS, strategy_create
from apps.judging.services.run_start import confirm_limit

#: The shipped variants tried beside the current strategy, when they exist and differ from it.
VARIANTS = (
    "fbi-single-rubric",
    "fbi-single-axis-rubric",
    "cd-knowledge",
    "cd-chain-of-thought",
    "fbi-reference",
)
FEW_SHOT = "cd-few-shot"
#: Poor examples drawn for the few-shot candidate: one per missed kind, at most this many.
EXAMPLES = 3


def _fbi_single(subject: AuditSubject) -> JudgeRun:
    part = AuditPart.objects.filter(subject=subject, part=PartKind.FBI_SINGLE).first()
    if part is None or part.run is None:
        raise ValidationError({"subject": "its card has no single-answer run to start from"})
    return part.run


def _problems(owner: Any, subject: AuditSubject, strategies: Sequence[Strategy]) -> dict:
    if subject.audit.owner_id != owner.pk and not owner.is_superuser:
        return {"subject": "no such card of yours"}
    if subject.judge.is_metric or subject.strategy is None:
        return {"subject": "a metric judge has no prompt to improve"}
    mine = selectors.strategies_for_user(owner, latest=False)
    for strategy in strategies:
        if not mine.filter(pk=strategy.pk).exists():
            return {"strategies": "no such strategy"}
        if strategy.pairwise or "{{expert_rating}}" in strategy.prompt_template:
            return {"strategies": f"{strategy.name}: choose strategies that score one text"}
    return {}


def split(items: Sequence[int], seed: int) -> tuple[list[int], list[int]]:
    """The source items in two halves, shuffled by ``seed``: (training, held out)."""
    shuffled = sorted(items)
    random.Random(seed).shuffle(shuffled)
    half = (len(shuffled) + 1) // 2
    return sorted(shuffled[:half]), sorted(shuffled[half:])


def _examples(base: JudgeRun, train: list[int], missed: list[str], scale: tuple[int, int]) -> list:
    """Few-shot examples from the training half: a poor one per missed kind (a perturbation
    vetted valid, or of a validated dataset, when the card judged only those), and the good
    original of the first."""
    low, high = scale
    poor_score = low + (high - low) // 4
    perturbations = Perturbation.objects.filter(item_id__in=train, kind__name__in=missed)
    if base.vetted_only:
        perturbations = perturbations.filter(vetted(base))
    perturbations = perturbations.select_related("item", "kind").order_by("kind__name", "id")
    examples, seen = [], set()
    for perturbation in perturbations:
        if perturbation.kind.name in seen:
            continue
        seen.add(perturbation.kind.name)
        examples.append(
            {
                "source": perturbation.item.source,
                "text": perturbation.text,
                "score": poor_score,
                "why": f"{perturbation.kind.name}: {perturbation.kind.description}".strip(": "),
            }
        )
        if len(examples) == EXAMPLES:
            break
    if examples:
        first = perturbations.first()
        assert first is not None
        good = {"source": first.item.source, "text": first.item.original, "score": high}
        examples.insert(0, good | {"why": "no error of these kinds"})
    return examples


def _candidates(owner: Any, subject: AuditSubject, strategies: Sequence[Strategy]) -> list:
    """(strategy, origin, label) of every candidate, the current strategy first."""
    current = subject.strategy
    assert current is not None
    found = [(current, Origin.CURRENT, f"current: {current.name}")]
    shipped = selectors.strategies_for_user(owner).filter(slug__in=VARIANTS, created_by=None)
    for strategy in sorted(shipped, key=lambda s: VARIANTS.index(s.slug)):
        if strategy.slug != current.slug:
            found.append((strategy, Origin.SHIPPED, strategy.name))
    for strategy in strategies:
        if strategy.pk != current.pk:
            found.append((strategy, Origin.YOURS, f"yours: {strategy.name}"))
    return found


def _few_shot(owner: Any, improvement: Improvement, base: JudgeRun, missed: list[str]):
    """A few-shot strategy whose examples show the kinds the judge misses on the training
    texts (None when it misses none, or none has a vetted perturbation there)."""
    template = selectors.strategies_for_user(owner).filter(slug=FEW_SHOT, created_by=None).first()
    if template is None or not missed:
        return None
    scale = (template.scale_min, template.scale_max)
    examples = _examples(base, improvement.train_items, missed, scale)
    if not examples:
        return None
    fields = {name: getattr(template, name) for name in STRATEGY_FIELDS} | {
        "name": f"Few-shot: {', '.join(missed[:EXAMPLES])}",
        "examples": examples,
    }
    return strategy_create(
        slug=f"improvement-{improvement.pk}-few-shot",
        user=owner,
        note=f"Improvement {improvement.pk}: examples from its training texts only.",
        **fields,
    )


def _run(owner: Any, base: JudgeRun, strategy: Strategy, items: list[int], label: str) -> JudgeRun:
    """``base``'s selection with ``strategy`` on ``items``, planned (its calls listed)."""
    run = judge_run_create(
        user=owner,
        judge=base.judge,
        strategy=strategy,
        study=base.study,
        dataset=base.dataset,
        criteria=base.criteria.all(),
        metrics=base.metrics.all(),
        kinds=base.kinds.all(),
        item_ids=items,
        include_originals=True,
        include_perturbations=True,
        vetted_only=base.vetted_only,
        label=label,
        start=False,
    )
    return judge_run_plan(run_id=run.pk)


@transaction.atomic
def improvement_plan(
    *,
    owner: Any,
    subject: AuditSubject,
    strategies: Iterable[Strategy] = (),
    budget_requests: int | None = None,
    seed: int = 0,
) -> Improvement:
    """Record and plan an improvement of ``subject`` (nothing queued yet), with its estimate.
    Bad input raises ValidationError naming the fields; nothing is written."""
    chosen = list(strategies)
    if problems := _problems(owner, subject, chosen):
        raise ValidationError(problems)
    base = _fbi_single(subject)
    items = sorted(set(JudgeCall.objects.filter(run=base).values_list("item_id", flat=True)))
    if len(items) < 4:
        raise ValidationError({"subject": f"{len(items)} texts judged: halves need 4 at least"})
    train, held = split(items, seed)
    improvement = Improvement.objects.create(
        owner=owner,
        subject=subject,
        seed=seed,
        train_items=train,
        held_items=held,
        budget_requests=budget_requests,
    )
    known = measure(base, set(train), threshold_of(base))
    candidates = _candidates(owner, subject, chosen)
    if few_shot := _few_shot(owner, improvement, base, known["blind_spots"]):
        candidates.append((few_shot, Origin.FEW_SHOT, few_shot.name))
    for strategy, origin, label in candidates:
        tag = f"improvement {improvement.pk}: {label}"
        ImprovementCandidate.objects.create(
            improvement=improvement,
            strategy=strategy,
            origin=origin,
            label=label,
            train_run=_run(owner, base, strategy, train, f"{tag} · training"),
            held_run=_run(owner, base, strategy, held, f"{tag} · held out"),
        )
    improvement.estimate = improvement_estimate(improvement)
    improvement.save(update_fields=["estimate"])
    return improvement


def _sum(figures: Iterable[dict[str, Any]]) -> dict[str, Any]:
    total: dict[str, Any] = dict.fromkeys(KEYS, 0)
    for each in figures:
        for key in KEYS:
            total[key] += each.get(key, 0)
    return total


def improvement_estimate(improvement: Improvement) -> dict[str, Any]:
    """Training: every candidate's training run. Confirmation: the current strategy's
    held-out run and the costliest candidate's (the best is known only then)."""
    candidates = list(improvement.candidates.select_related("train_run", "held_run"))
    seen: set[str] = set()
    training = _sum(run_estimate(c.train_run, seen) for c in candidates if c.train_run)
    held = {c.pk: run_estimate(c.held_run, set(seen)) for c in candidates if c.held_run}
    current = next((held[c.pk] for c in candidates if c.current and c.pk in held), {})
    others = [held[c.pk] for c in candidates if not c.current and c.pk in held]
    costliest = max(others, key=lambda f: f.get("http_calls", 0), default={})
    confirmation = _sum([current, costliest])
    judge = improvement.subject.judge
    figures: dict[str, Any] = {"training": training, "confirmation": confirmation, "whole": {}}
    figures["whole"] = _sum([training, confirmation])
    batch = not judge.batch_problem(improvement.subject.strategy)
    for part in (figures["training"], figures["confirmation"], figures["whole"]):
        tokens = part["prompt_tokens"], part["completion_tokens"]
        cost, batch_cost = judge.cost(*tokens), judge.batch_cost(*tokens) if batch else None
        if not part["http_calls"]:
            cost = batch_cost = Decimal(0) if cost is not None else None
        part["cost_usd"] = None if cost is None else str(cost)  # None: the judge has no prices
        part["cost_batch_usd"] = None if batch_cost is None else str(batch_cost)
    figures["batch_problem"] = judge.batch_problem(improvement.subject.strategy)
    return figures


def improvement_confirm_problem(improvement: Improvement) -> str:
    """Why starting it needs a confirmation ("" when it does not)."""
    http = (improvement.estimate or {}).get("whole", {}).get("http_calls", 0)
    limit = confirm_limit(improvement.subject.audit)
    if http <= limit:
        return ""
    return (
        f"this improvement would send up to {http} requests to models, above the limit of "
        f"{limit}: confirm to start it"
    )


@transaction.atomic
def improvement_start(
    *,
    improvement: Improvement,
    confirmed: bool = False,
    batch: bool = False,
    live_fallback: bool = False,
) -> Improvement:
    """Start the training runs; the worker moves it on from there (``advance``). ``batch``:
    every run (training and held-out) through the judge's batch interface, at its batch
    price; ``live_fallback``: what a batch leaves unanswered is asked live."""
    improvement = Improvement.objects.select_for_update().get(pk=improvement.pk)
    if improvement.status != RunStatus.PENDING:
        return improvement
    if not confirmed and (problem := improvement_confirm_problem(improvement)):
        raise ValidationError({"confirm": problem})
    judge = improvement.subject.judge
    if batch and (why := judge.batch_problem(improvement.subject.strategy)):
        raise ValidationError({"batch": f"not as a batch: {why}"})
    for run in improvement.runs() if batch else []:
        if not judge.batch_problem(run.strategy):  # a candidate asking again runs live
            run.batch_mode, run.batch_live_fallback = True, live_fallback
            run.save(update_fields=["batch_mode", "batch_live_fallback"])
    for candidate in improvement.candidates.select_related("train_run"):
        if candidate.train_run is not None and candidate.train_run.status == RunStatus.PENDING:
            judge_run_start(run=candidate.train_run)
    improvement.status, improvement.started_at = RunStatus.RUNNING, timezone.now()
    improvement.save(update_fields=["status", "started_at"])
    queue_advance(improvement.pk)
    return improvement


def queue_advance(improvement_id: int, countdown: float = 0.0) -> None:
    from workers.tasks.improvement import advance_improvement

    transaction.on_commit(
        lambda: advance_improvement.apply_async((improvement_id,), countdown=countdown)
    )


@transaction.atomic
def improvement_cancel(*, improvement: Improvement) -> Improvement:
    """Stop its runs; what was measured so far stays."""
    improvement = Improvement.objects.select_for_update().get(pk=improvement.pk)
    if improvement.finished:
        return improvement
    for run in improvement.runs():
        if run.status == RunStatus.RUNNING:
            judge_run_cancel(run=run)
    discard_unused(improvement, keep=())
    improvement.status, improvement.finished_at = RunStatus.CANCELLED, timezone.now()
    improvement.save(update_fields=["status", "finished_at"])
    return improvement


@transaction.atomic
def improvement_adopt(*, improvement: Improvement, user: Any) -> Strategy:
    """The recommended strategy as a new strategy of the researcher's (the old stays)."""
    improvement = Improvement.objects.select_for_update().get(pk=improvement.pk)
    if improvement.adopted is not None:
        return improvement.adopted
    winner = improvement.candidates.filter(pk=improvement.result.get("winner")).first()
    if not improvement.result.get("recommended") or winner is None:
        raise ValidationError({"improvement": "nothing to adopt: no candidate was confirmed"})
    source = winner.strategy
    subject = improvement.subject
    fields = {name: getattr(source, name) for name in STRATEGY_FIELDS}
    fields["name"] = f"{subject.judge.name}: {source.name} (improved)"[:200]
    closed = ", ".join(improvement.result.get("closed", [])) or "none"
    adopted = strategy_create(
        slug=f"improved-{improvement.pk}-{source.slug}"[:80],
        user=user,
        note=f"Adopted from improvement {improvement.pk} of {subject}: confirmed on "
        f"{len(improvement.held_items)} held-out source items; blind spots closed: {closed}.",
        **fields,
    )
    improvement.adopted = adopted
    improvement.save(update_fields=["adopted"])
    return adopted


def discard_unused(improvement: Improvement, keep: Iterable[int]) -> None:
    """Remove the planned held-out runs that will not run: those of candidates not in
    ``keep`` that never started."""
    kept = set(keep)
    for candidate in improvement.candidates.select_related("held_run"):
        run = candidate.held_run
        if run is not None and candidate.pk not in kept and run.status == RunStatus.PENDING:
            candidate.held_run = None
            candidate.save(update_fields=["held_run"])
            run.delete()
