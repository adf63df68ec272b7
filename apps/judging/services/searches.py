"""Adversarial searches (docs/adversarial.md): set up, start, cancel, resume; the worker's
side (claim, work, fail) and recovery after a worker died.

A search's life: ``adversarial_search_create`` (inputs checked; one judge run per gold judge
and one for the victim, where every judge call of the search is kept) → started: status
running, a worker task queued on commit → the task claims the search (one worker at a time:
a claim with a heartbeat) and works it (``adversarial.loop``) to the end →
``adversarial_search_cancel`` stops it within a second or so; ``adversarial_search_resume``
continues from the last finished step; ``adversarial_searches_recover`` restarts searches
whose worker died.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q
from django.db.models.functions import Now
from django.utils import timezone

from apps.accounts.permissions import owned_by
from apps.annotation.models import Study
from apps.catalog.models import Criterion
from apps.corpus.models import Dataset, SourceItem
from apps.corpus.selectors import datasets_for_user
from apps.endpoints.models import Endpoint
from apps.endpoints.selectors import endpoints_for_user
from apps.judging import claims, selectors
from apps.judging.adversarial.loop import HEARTBEAT_S, Heartbeat, SearchWork
from apps.judging.models import (
    AdversarialSearch,
    Direction,
    ItemStatus,
    IterationStatus,
    Judge,
    JudgeRun,
    Method,
    Role,
    RunStatus,
    SearchItem,
    SearchIteration,
    SearchJudge,
    Strategy,
)

#: A search whose heartbeat is older than this has no live worker.
STALE_AFTER_S = 10 * HEARTBEAT_S


@dataclass
class JudgeChoice:
    judge: Judge
    strategy: Strategy | None = None


@dataclass
class SearchSetup:
    """The inputs of a search (docs/adversarial.md, "Setting up a search")."""

    dataset: Dataset
    generator: Endpoint
    victim: JudgeChoice
    gold: list[JudgeChoice]
    direction: str
    criterion: Criterion | None = None
    criterion_in_prompt: bool = True
    study: Study | None = None
    item_ids: Sequence[int] = ()
    alpha: float = 1.0
    target_score: float = 60.0
    max_iterations: int = 10
    query_budget: int = 300
    candidates_per_iteration: int = 4
    generator_temperature: float = 1.0
    generator_max_tokens: int = 1024
    tau1: float | None = None
    tau2: float = 40.0
    rule_baseline: bool = True
    label: str = ""
    problems: dict[str, str] = field(default_factory=dict)


# -- checks ------------------------------------------------------------------------------------


def _strategy_problem(choice: JudgeChoice, role: str) -> str:
    if choice.judge.is_metric:
        if role == "gold":
            return "gold judges are LLM judges (the paper's gold is an LLM rating 0-100)"
        return "metric judges need no strategy" if choice.strategy is not None else ""
    strategy = choice.strategy
    if strategy is None:
        return f"the {role} LLM judge needs a strategy"
    if strategy.pairwise:
        return f"the {role} strategy must score one text (not a pairwise one)"
    if "{{expert_rating}}" in strategy.prompt_template:
        return f"the {role} strategy needs expert ratings of originals: not for candidates"
    return ""


def _access_problems(user: Any, setup: SearchSetup) -> dict[str, str]:
    """What this user may not use, named as if it did not exist (``user`` None: trusted)."""
    if user is None:
        return {}
    problems = {}
    judges = selectors.judges_for_user(user)
    strategies = selectors.strategies_for_user(user, latest=False)
    if not datasets_for_user(user).filter(pk=setup.dataset.pk).exists():
        problems["dataset"] = "no such dataset"
    if setup.study is not None and not _own_studies(user).filter(pk=setup.study.pk).exists():
        problems["study"] = "no such study of yours"
    if not endpoints_for_user(user).filter(pk=setup.generator.pk).exists():
        problems["generator"] = "no such endpoint"
    for name, choices in (("victim", [setup.victim]), ("gold", setup.gold)):
        for choice in choices:
            if not judges.filter(pk=choice.judge.pk).exists():
                problems[name] = "no such judge"
            elif choice.strategy and not strategies.filter(pk=choice.strategy.pk).exists():
                problems[f"{name}_strategy"] = "no such strategy"
    return problems


def _own_studies(user: Any) -> Any:
    """A search may add to a study (its kinds, its plan): only to its owner's."""
    return owned_by(Study.objects.all(), user)


def _input_problems(setup: SearchSetup) -> dict[str, str]:
    problems: dict[str, str] = {}
    if setup.direction not in Direction.values:
        problems["direction"] = "R+ or R-"
    if why := _strategy_problem(setup.victim, "victim"):
        problems["victim_strategy"] = why
    if not setup.gold:
        problems["gold"] = "choose at least one gold judge"
    for choice in setup.gold:
        if why := _strategy_problem(choice, "gold"):
            problems["gold_strategy"] = why
    named = [
        c.strategy for c in [setup.victim, *setup.gold] if c.strategy and c.strategy.names_quality
    ]
    if named and setup.criterion is None:
        problems["criterion"] = "the judges' strategies name a quality: choose a criterion"
    if not setup.alpha > 0:
        problems["alpha"] = "a number above 0"
    if setup.max_iterations < 1:
        problems["max_iterations"] = "at least 1"
    if setup.candidates_per_iteration < 1:
        problems["candidates_per_iteration"] = "at least 1"
    victim_samples = setup.victim.strategy.samples if setup.victim.strategy else 1
    if setup.query_budget < 2 * victim_samples:
        problems["query_budget"] = (
            f"at least {2 * victim_samples}: R0 and one candidate, {victim_samples} victim "
            "call(s) each"
        )
    if setup.study is not None and not setup.study.datasets.filter(pk=setup.dataset.pk).exists():
        problems["dataset"] = "this dataset is not part of the study"
    return problems


def _items(setup: SearchSetup) -> list[SourceItem]:
    items = SourceItem.objects.filter(dataset=setup.dataset).order_by("id")
    if setup.item_ids:
        items = items.filter(pk__in=[int(i) for i in setup.item_ids])
    return list(items)


# -- creating, starting, stopping --------------------------------------------------------------


@transaction.atomic
def adversarial_search_create(
    *, user: Any, setup: SearchSetup, start: bool = True
) -> AdversarialSearch:
    """Record a search (inputs checked) with its judge runs and items; start it unless told
    not to. Bad input raises ValidationError naming the fields; nothing is written."""
    problems = _access_problems(user, setup) or _input_problems(setup)
    items = _items(setup) if not problems else []
    if not problems and not items:
        problems["item_ids"] = "the selection has no items"
    if problems:
        raise ValidationError(problems)
    search = AdversarialSearch.objects.create(
        label=setup.label,
        dataset=setup.dataset,
        study=setup.study,
        item_ids=[int(i) for i in setup.item_ids],
        criterion=setup.criterion,
        criterion_in_prompt=setup.criterion_in_prompt,
        generator=setup.generator,
        generator_temperature=setup.generator_temperature,
        generator_max_tokens=setup.generator_max_tokens,
        direction=setup.direction,
        alpha=setup.alpha,
        target_score=setup.target_score,
        max_iterations=setup.max_iterations,
        query_budget=setup.query_budget,
        candidates_per_iteration=setup.candidates_per_iteration,
        tau1=setup.tau1,
        tau2=setup.tau2,
        rule_baseline=setup.rule_baseline,
        created_by=user,
    )
    roles = [(Role.VICTIM, setup.victim), *((Role.GOLD, g) for g in setup.gold)]
    for role, choice in roles:
        _search_judge(search, role, choice, user)
    methods = [Method.ADVEVAL] + ([Method.RULES] if setup.rule_baseline else [])
    SearchItem.objects.bulk_create(
        SearchItem(search=search, item=item, method=method) for item in items for method in methods
    )
    return adversarial_search_start(search=search) if start else search


def _search_judge(search: AdversarialSearch, role: str, choice: JudgeChoice, user: Any) -> None:
    run = JudgeRun.objects.create(
        judge=choice.judge,
        strategy=choice.strategy,
        dataset=search.dataset,
        label=f"adversarial search {search.pk}: {role} {choice.judge.name}",
        item_ids=search.item_ids,
        include_perturbations=False,
        vetted_only=False,
        planned=True,
        created_by=user,
    )
    if search.criterion is not None and not choice.judge.is_metric:
        run.criteria.set([search.criterion])
    SearchJudge.objects.create(
        search=search, role=role, judge=choice.judge, strategy=choice.strategy, run=run
    )


def _run_ids(search: AdversarialSearch) -> list[int]:
    return list(SearchJudge.objects.filter(search=search).values_list("run_id", flat=True))


@transaction.atomic
def adversarial_search_start(*, search: AdversarialSearch) -> AdversarialSearch:
    AdversarialSearch.objects.filter(pk=search.pk).update(
        status=RunStatus.RUNNING, heartbeat_at=Now(), finished_at=None, error=""
    )
    JudgeRun.objects.filter(pk__in=_run_ids(search)).update(
        status=RunStatus.RUNNING, heartbeat_at=Now(), finished_at=None, error=""
    )
    search.refresh_from_db()
    _dispatch(search)
    return search


def _dispatch(search: AdversarialSearch) -> None:
    from workers.tasks.adversarial import queue_search_work

    transaction.on_commit(lambda: queue_search_work(search.pk))


@transaction.atomic
def adversarial_search_cancel(*, search: AdversarialSearch) -> AdversarialSearch:
    """Stop a search: its worker stops at its next check (calls on the wire are kept);
    nothing finished is lost, and a resume continues from there."""
    stopped = AdversarialSearch.objects.filter(
        pk=search.pk, status__in=[RunStatus.PENDING, RunStatus.RUNNING]
    ).update(status=RunStatus.CANCELLED, finished_at=Now())
    if stopped:
        JudgeRun.objects.filter(pk__in=_run_ids(search), status=RunStatus.RUNNING).update(
            status=RunStatus.CANCELLED, finished_at=Now()
        )
    search.refresh_from_db()
    return search


def _alive(search: AdversarialSearch) -> bool:
    fresh = timezone.now() - timedelta(seconds=STALE_AFTER_S)
    beat = search.heartbeat_at
    return search.status == RunStatus.RUNNING and bool(search.claimed_by and beat and beat > fresh)


@transaction.atomic
def adversarial_search_resume(*, search: AdversarialSearch) -> AdversarialSearch:
    """Continue a cancelled, failed or stalled search from its last finished step; items
    whose generator call failed (after its retries) are tried again. A search making
    progress, or done with no failed item, is left alone. (A judge call that got no usable
    reply left its candidate unscored, and the search went on: it is not asked again.)"""
    search.refresh_from_db()
    failed_items = SearchItem.objects.filter(search=search, status=ItemStatus.FAILED)
    if _alive(search) or (search.status == RunStatus.DONE and not failed_items.exists()):
        return search
    for item in failed_items:
        SearchIteration.objects.filter(search_item=item, status=IterationStatus.FAILED).update(
            status=IterationStatus.PENDING, parse_status=""
        )
    failed_items.update(status=ItemStatus.RUNNING, error="")
    if not SearchItem.objects.filter(search=search, status=ItemStatus.RUNNING).exists():
        return search
    return adversarial_search_start(search=search)


# -- the worker's side -------------------------------------------------------------------------


def adversarial_search_claim(*, search_id: int, token: str) -> bool:
    """Take the search for this worker unless a live worker has it."""
    stale = timezone.now() - timedelta(seconds=STALE_AFTER_S)
    free = Q(claimed_by="") | Q(heartbeat_at__isnull=True) | Q(heartbeat_at__lt=stale)
    taken = (
        AdversarialSearch.objects.filter(pk=search_id, status=RunStatus.RUNNING)
        .filter(free)
        .update(claimed_by=token, heartbeat_at=Now())
    )
    if taken:
        AdversarialSearch.objects.filter(pk=search_id, started_at__isnull=True).update(
            started_at=Now()
        )
    return bool(taken)


def adversarial_search_work(*, search_id: int, node: str = "") -> None:
    """The worker task's body: claim, work to the end (or cancel), give the claim back."""
    token = claims.new_token(node)
    if not adversarial_search_claim(search_id=search_id, token=token):
        return
    search = AdversarialSearch.objects.select_related("generator", "criterion__aspect").get(
        pk=search_id
    )
    heartbeat = Heartbeat(search_id, token)
    heartbeat.start()
    try:
        SearchWork(search, token, node).run_all(heartbeat)
    finally:
        heartbeat.stop()
        released = AdversarialSearch.objects.filter(pk=search_id, claimed_by=token).update(
            claimed_by=""
        )
    if released and _unfinished(search_id):
        _requeue(search_id)  # resumed while this worker was stopping: carry on


def _unfinished(search_id: int) -> bool:
    return AdversarialSearch.objects.filter(pk=search_id, status=RunStatus.RUNNING).exists()


def _requeue(search_id: int) -> None:
    from workers.tasks.adversarial import queue_search_work

    queue_search_work(search_id)


def adversarial_search_fail(*, search_id: int, error: str) -> None:
    """A worker gave up on the search (not on a call: failed calls fail nothing)."""
    with transaction.atomic():
        AdversarialSearch.objects.filter(pk=search_id, status=RunStatus.RUNNING).update(
            status=RunStatus.FAILED, error=error[:5000], finished_at=Now(), claimed_by=""
        )
        run_ids = SearchJudge.objects.filter(search_id=search_id).values_list("run_id", flat=True)
        JudgeRun.objects.filter(pk__in=list(run_ids), status=RunStatus.RUNNING).update(
            status=RunStatus.FAILED, error=f"the search failed: {error[:4000]}", finished_at=Now()
        )


def adversarial_searches_recover(*, node: str = "") -> list[int]:
    """Restart running searches whose worker died: those ``node``'s previous incarnation held
    (a restarted worker is certain they are dead) and those with no heartbeat for a while.
    Returns the searches restarted."""
    running = AdversarialSearch.objects.filter(status=RunStatus.RUNNING)
    restarted: set[int] = set()
    if node:
        mine = running.filter(claimed_by__startswith=f"{node}/")
        restarted |= set(mine.values_list("id", flat=True))
        mine.update(claimed_by="")
    stale = timezone.now() - timedelta(seconds=STALE_AFTER_S)
    quiet = running.filter(
        Q(heartbeat_at__lt=stale) | Q(heartbeat_at__isnull=True, created_at__lt=stale)
    )
    restarted |= set(quiet.values_list("id", flat=True))
    for search_id in sorted(restarted):
        _requeue(search_id)
    return sorted(restarted)
