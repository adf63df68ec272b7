"""Judge audits (docs/audit.md): plan the standard battery as ordinary judge runs and an
adversarial search, estimate it before it starts, start, cancel and resume it as one.

``audit_plan`` records the audit, its subjects and one part per kind of evidence: a judge run
(planned at once, so its calls are listed and counted), a search, or the reason the part
cannot apply here (``skipped_reason``). Parts that ask the same thing share one run (the single-
score run serves FBI single, aspect deltas and agreement with humans). Every call goes through
the judge-call cache, so auditing a judge again costs no HTTP request. ``audit_estimate``
counts the calls and what the cache already answers; ``audit_refresh`` makes the audit's status
follow its parts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from apps.annotation.models import Assessment, Study
from apps.catalog.models import Criterion, KindFamily, Metric, PerturbationKind
from apps.corpus.models import Dataset, Perturbation, SourceItem
from apps.corpus.selectors import datasets_for_user
from apps.endpoints.models import Endpoint
from apps.judging import selectors
from apps.judging.models import (
    AdversarialSearch,
    AuditPart,
    AuditStatus,
    AuditSubject,
    Judge,
    JudgeAudit,
    JudgeRun,
    PartKind,
    RunStatus,
    Strategy,
)
from apps.judging.services.audit_estimate import audit_estimate
from apps.judging.services.run_start import confirm_limit
from apps.judging.services.runs import (
    judge_run_cancel,
    judge_run_create,
    judge_run_resume,
    judge_run_start,
)
from apps.judging.services.searches import (
    JudgeChoice,
    SearchSetup,
    adversarial_search_cancel,
    adversarial_search_create,
    adversarial_search_resume,
    adversarial_search_start,
)
from apps.judging.services.work import judge_run_plan

#: The shipped strategies the battery asks with, besides the subject's own.
STANDARD = {
    PartKind.FBI_PAIRWISE: "fbi-pairwise-vanilla",
    PartKind.FBI_REFERENCE: "fbi-reference",
    PartKind.MISLEADING_CUE: "cd-misleading-cue",
    "knowledge": "cd-knowledge",
    "gold": "adveval-gold-0-100",
}
#: The small adversarial search: direction, generator rounds and candidates per round.
SEARCH_DIRECTION = "R-"
SEARCH_ITERATIONS = 3
SEARCH_CANDIDATES = 2
#: Whether a study or dataset has human ratings, asked of each source in turn. Sources kept
#: above this layer (imported ratings: apps.analysis) add themselves here when they load.
HUMAN_RATING_SOURCES: list[Callable[[Study | None, Dataset | None], bool]] = []


def _collected_ratings(study: Study | None, dataset: Dataset | None) -> bool:
    return study is not None and Assessment.objects.filter(unit__study=study).exists()


HUMAN_RATING_SOURCES.append(_collected_ratings)


@dataclass
class Data:
    """What the audited study or dataset holds, as the battery needs it."""

    study: Study | None
    dataset: Dataset | None
    items: list[SourceItem]
    perturbations: int
    kinds: list[PerturbationKind]
    aspect_kinds: int
    criteria: list[Criterion]
    metrics: list[Metric]
    expert_ratings: bool
    human_ratings: bool

    @property
    def name(self) -> str:
        return "study" if self.study is not None else "dataset"


def _data(study: Study | None, dataset: Dataset | None) -> Data:
    if study is not None:
        items = SourceItem.objects.filter(dataset__studies=study)
        criteria = list(study.criteria.select_related("aspect"))
    else:
        items = SourceItem.objects.filter(dataset=dataset)
        criteria = []
    items = items.order_by("id").distinct()
    tasks = {i.task_id or i.dataset.task_id for i in items.select_related("dataset")}
    perturbations = Perturbation.objects.filter(item__in=items.values("id")).exclude(
        kind__family=KindFamily.ADVERSARIAL
    )
    if study is not None and study.kinds.exists():
        perturbations = perturbations.filter(kind__in=study.kinds.all())
    return Data(
        study=study,
        dataset=dataset,
        items=list(items),
        perturbations=perturbations.count(),
        kinds=list(PerturbationKind.objects.filter(id__in=perturbations.values("kind_id"))),
        aspect_kinds=perturbations.filter(kind__target_aspect__isnull=False).count(),
        criteria=criteria,
        metrics=list(Metric.objects.filter(task_id__in=[t for t in tasks if t is not None])),
        expert_ratings=items.filter(metadata__has_key="expert_ratings").exists(),
        human_ratings=any(source(study, dataset) for source in HUMAN_RATING_SOURCES),
    )


# -- checks ------------------------------------------------------------------------------------


def _subject_problem(judge: Judge, strategy: Strategy | None) -> str:
    if judge.is_metric:
        return "metric judges need no strategy" if strategy is not None else ""
    if strategy is None:
        return f"{judge.name}: an LLM judge needs a single-score strategy"
    if strategy.pairwise:
        return f"{strategy.name}: choose a strategy that scores one text (not a pairwise one)"
    if "{{expert_rating}}" in strategy.prompt_template:
        return f"{strategy.name}: the misleading cue is part of the battery, not a subject"
    return ""


def _problems(
    owner: Any,
    study: Study | None,
    dataset: Dataset | None,
    subjects: Sequence[tuple[Judge, Strategy | None]],
    search_budget: int,
    generator: Endpoint | None,
    gold_judge: Judge | None,
) -> dict[str, str]:
    problems: dict[str, str] = {}
    if (study is None) == (dataset is None):
        problems["data"] = "choose a study or a dataset (one of them)"
    elif study is not None and study.owner_id != owner.pk and not owner.is_superuser:
        problems["study"] = "no such study of yours"
    elif dataset is not None and not datasets_for_user(owner).filter(pk=dataset.pk).exists():
        problems["dataset"] = "no such dataset"
    judges = selectors.judges_for_user(owner)
    strategies = selectors.strategies_for_user(owner, latest=False)
    if not subjects:
        problems["judges"] = "choose at least one judge"
    for judge, strategy in subjects:
        if not judges.filter(pk=judge.pk).exists():
            problems["judges"] = "no such judge"
        elif strategy is not None and not strategies.filter(pk=strategy.pk).exists():
            problems["strategies"] = "no such strategy"
        elif why := _subject_problem(judge, strategy):
            problems["strategies"] = why
    if search_budget < 2:
        problems["search_budget"] = "at least 2 victim queries per item"
    if gold_judge is not None and (
        gold_judge.is_metric or not judges.filter(pk=gold_judge.pk).exists()
    ):
        problems["gold_judge"] = "choose one of your LLM judges"
    if generator is not None:
        from apps.endpoints.selectors import endpoints_for_user

        if not endpoints_for_user(owner).filter(pk=generator.pk).exists():
            problems["generator"] = "no such endpoint"
    return problems


# -- planning ----------------------------------------------------------------------------------


def _standard(owner: Any, key: str) -> Strategy | None:
    found = selectors.strategies_for_user(owner).filter(slug=STANDARD[key])
    return found.order_by("-version").first()


class Planner:
    """Plans the parts of one subject (docs/audit.md, "What the battery runs")."""

    def __init__(
        self, audit: JudgeAudit, subject: AuditSubject, data: Data, vetted_only: bool | None
    ) -> None:
        self.audit, self.subject, self.data = audit, subject, data
        self.vetted_only = vetted_only
        self.judge, self.strategy = subject.judge, subject.strategy
        self.runs: dict[str, JudgeRun | str] = {}

    def part(self, kind: str, **fields: Any) -> AuditPart:
        return AuditPart.objects.create(subject=self.subject, part=kind, **fields)

    def skip(self, kind: str, reason: str) -> AuditPart:
        return self.part(kind, skipped_reason=reason)

    def run_part(self, kind: str, strategy: Strategy | None, **selection: Any) -> AuditPart:
        """A part held in a run: the same run for every part that asks the same thing."""
        found = self.run(strategy, **selection)
        if isinstance(found, str):
            return self.skip(kind, found)
        return self.part(kind, run=found)

    def run(self, strategy: Strategy | None, **selection: Any) -> JudgeRun | str:
        """A planned run, or why there is nothing to judge."""
        key = str((strategy.pk if strategy else None, sorted(selection.items(), key=str)))
        if key in self.runs:
            return self.runs[key]
        data = self.data
        study = data.study
        qualities: dict[str, Any] = {}
        metrics_only = selection.pop("metrics_only", False)
        if not self.judge.is_metric and not metrics_only:
            qualities["criteria"] = data.criteria
        if not self.judge.is_metric and not qualities.get("criteria"):
            qualities["metrics"] = data.metrics
        vetted = study.vetted_only_default if study is not None else False
        if self.vetted_only is not None and study is not None:
            vetted = self.vetted_only
        # the kinds the data had when planned, never adversarial ones: an audit's search adds
        # its texts to the study, and a later audit must judge the same texts (0 HTTP again)
        if data.kinds:
            selection["kinds"] = data.kinds
        else:
            selection["include_perturbations"] = False
        run = judge_run_create(
            user=self.audit.owner,
            judge=self.judge,
            strategy=strategy,
            study=study,
            dataset=data.dataset,
            vetted_only=vetted,
            label=f"audit {self.audit.pk}: {self.subject} · {strategy.name if strategy else ''}",
            start=False,
            **qualities,
            **selection,
        )
        run = judge_run_plan(run_id=run.pk)
        result: JudgeRun | str = run
        if run.total == 0:
            reasons = [p["reason"] for p in run.problems] or [run.error]
            result = "nothing to judge: " + "; ".join(reasons)
            run.delete()
        self.runs[key] = result
        return result

    def plan(self) -> None:
        data, judge = self.data, self.judge
        if not data.items:
            for kind in PartKind.values:
                self.skip(kind, f"the {data.name} has no items")
            return
        if not judge.is_metric and not data.criteria and not data.metrics:
            for kind in PartKind.values:
                self.skip(kind, f"the {data.name} has no criteria and its tasks no metrics")
            return
        self.single_score_parts()
        self.pairwise_and_reference()
        self.misleading_cue()
        self.adversarial()

    def single_score_parts(self) -> None:
        data, judge, strategy = self.data, self.judge, self.strategy
        single = self.run_part(PartKind.FBI_SINGLE, strategy)
        no_perturbations = f"the {data.name} has no perturbations (vetted ones, in a study)"
        if not data.perturbations:
            self.skip(PartKind.DISCERNMENT, no_perturbations)
        elif data.metrics and data.criteria and not judge.is_metric:
            self.run_part(PartKind.DISCERNMENT, strategy, metrics_only=True)
        else:
            self.part(PartKind.DISCERNMENT, run=single.run, skipped_reason=single.skipped_reason)
        if judge.is_metric:
            self.skip(
                PartKind.ASPECT_DELTAS, "metric judges give one score per text, not per aspect"
            )
        elif strategy is not None and not strategy.names_quality:
            self.skip(
                PartKind.ASPECT_DELTAS,
                "the strategy's prompt names no criterion: one score per text, not per aspect",
            )
        elif not data.criteria:
            self.skip(PartKind.ASPECT_DELTAS, "aspect deltas need criteria (a study's)")
        elif not data.aspect_kinds:
            self.skip(
                PartKind.ASPECT_DELTAS, f"no perturbations of aspect kinds in the {data.name}"
            )
        else:
            self.part(PartKind.ASPECT_DELTAS, run=single.run, skipped_reason=single.skipped_reason)
        if not data.human_ratings:
            self.skip(PartKind.HUMAN_AGREEMENT, f"no human ratings in this {data.name}")
        else:
            self.part(
                PartKind.HUMAN_AGREEMENT, run=single.run, skipped_reason=single.skipped_reason
            )

    def pairwise_and_reference(self) -> None:
        if self.judge.is_metric:
            self.skip(PartKind.FBI_PAIRWISE, "metric judges have no pairwise mode")
            self.skip(
                PartKind.FBI_REFERENCE,
                "a metric judge always compares with the original: no reference-guided prompt",
            )
            return
        for kind in (PartKind.FBI_PAIRWISE, PartKind.FBI_REFERENCE):
            strategy = _standard(self.audit.owner, kind)
            if strategy is None:
                self.skip(kind, f"the shipped strategy {STANDARD[kind]} is not installed")
            elif kind == PartKind.FBI_PAIRWISE and not self.data.perturbations:
                self.skip(kind, f"the {self.data.name} has no perturbations to compare")
            else:
                self.run_part(kind, strategy, include_originals=kind != PartKind.FBI_PAIRWISE)

    def misleading_cue(self) -> None:
        kind = PartKind.MISLEADING_CUE
        if self.judge.is_metric:
            self.skip(kind, "metric judges read no prompt")
            return
        cue, knowledge = _standard(self.audit.owner, kind), _standard(self.audit.owner, "knowledge")
        if cue is None or knowledge is None:
            self.skip(kind, "the shipped misleading-cue strategies are not installed")
            return
        if not self.data.expert_ratings:
            self.skip(kind, "the misleading cue needs expert ratings of originals (none here)")
            return
        part = self.run_part(kind, cue, include_perturbations=False)
        if part.run is not None:
            baseline = self.run(knowledge, include_perturbations=False)
            if isinstance(baseline, JudgeRun):
                part.baseline = baseline
                part.save(update_fields=["baseline"])

    def adversarial(self) -> None:
        kind, audit = PartKind.ADVERSARIAL, self.audit
        gold_strategy = _standard(audit.owner, "gold")
        if audit.generator is None or audit.gold_judge is None:
            self.skip(kind, "choose a generator endpoint and a gold judge for the search")
            return
        if gold_strategy is None:
            self.skip(kind, f"the shipped strategy {STANDARD['gold']} is not installed")
            return
        dataset = self.data.dataset or self.data.items[0].dataset
        named = gold_strategy.names_quality or bool(self.strategy and self.strategy.names_quality)
        criterion = self.data.criteria[0] if self.data.criteria else None
        if named and criterion is None:
            self.skip(kind, "the search's judges score a criterion: the study has none")
            return
        setup = SearchSetup(
            dataset=dataset,
            study=self.data.study,
            generator=audit.generator,
            victim=JudgeChoice(self.judge, self.strategy),
            gold=[JudgeChoice(audit.gold_judge, gold_strategy)],
            direction=SEARCH_DIRECTION,
            criterion=criterion if named else None,
            query_budget=audit.search_budget,
            max_iterations=SEARCH_ITERATIONS,
            candidates_per_iteration=SEARCH_CANDIDATES,
            rule_baseline=False,
            label=f"audit {audit.pk}: {self.subject}",
        )
        try:
            search = adversarial_search_create(user=audit.owner, setup=setup, start=False)
        except ValidationError as error:
            self.skip(kind, "; ".join(m for ms in error.message_dict.values() for m in ms))
            return
        self.part(kind, search=search)


@transaction.atomic
def audit_plan(
    *,
    owner: Any,
    study: Study | None = None,
    dataset: Dataset | None = None,
    subjects: Iterable[tuple[Judge, Strategy | None]],
    search_budget: int = 20,
    generator: Endpoint | None = None,
    gold_judge: Judge | None = None,
    label: str = "",
    vetted_only: bool | None = None,
) -> JudgeAudit:
    """Record and plan an audit (nothing queued yet) with its estimate. Bad input raises
    ValidationError naming the fields; nothing is written. ``vetted_only`` (a study's
    audit): judge only the perturbations vetted in the study; None: the study's default."""
    chosen = list(subjects)
    problems = _problems(owner, study, dataset, chosen, search_budget, generator, gold_judge)
    if problems:
        raise ValidationError(problems)
    audit = JudgeAudit.objects.create(
        owner=owner,
        study=study,
        dataset=dataset,
        search_budget=search_budget,
        generator=generator,
        gold_judge=gold_judge,
        label=label or f"Audit of {(study or dataset).name}",  # type: ignore[union-attr]
    )
    data = _data(study, dataset)
    for judge, strategy in chosen:
        name = f"{judge.name} · {strategy.name if strategy else 'metric'}"
        subject = AuditSubject.objects.create(
            audit=audit, judge=judge, strategy=strategy, label=name
        )
        Planner(audit, subject, data, vetted_only).plan()
    audit.estimate = audit_estimate(audit)
    audit.save(update_fields=["estimate"])
    return audit


# -- the whole battery at once -----------------------------------------------------------------


def _runs(audit: JudgeAudit) -> list[JudgeRun]:
    ids = set()
    for part in AuditPart.objects.filter(subject__audit=audit):
        ids |= {pk for pk in (part.run_id, part.baseline_id) if pk is not None}
    return list(JudgeRun.objects.filter(pk__in=ids).select_related("judge__endpoint", "strategy"))


def _searches(audit: JudgeAudit) -> list[AdversarialSearch]:
    parts = AuditPart.objects.filter(subject__audit=audit, search__isnull=False)
    return list(AdversarialSearch.objects.filter(pk__in=parts.values("search_id")))


@transaction.atomic
def audit_start(
    *, audit: JudgeAudit, confirmed: bool = False, batch: bool = False, live_fallback: bool = False
) -> JudgeAudit:
    """Queue every run and search of the battery (on commit). An audit whose estimate sends
    more HTTP requests than its study's limit starts only when ``confirmed``. ``batch``: the
    runs whose judges have a batch interface go through it (``live_fallback``: what a batch
    leaves unanswered is asked live); the others, and searches, run live."""
    audit = JudgeAudit.objects.select_for_update().get(pk=audit.pk)
    if audit.status != AuditStatus.PENDING:
        return audit
    if not confirmed and (problem := audit_confirm_problem(audit)):
        raise ValidationError({"confirm": problem})
    if batch and not (audit.estimate or {}).get("batch_runs"):
        raise ValidationError({"batch": "no audited judge has a batch interface"})
    for run in _runs(audit):
        if run.status == RunStatus.PENDING:
            if batch and not run.judge.batch_problem(run.strategy):
                run.batch_mode, run.batch_live_fallback = True, live_fallback
                run.save(update_fields=["batch_mode", "batch_live_fallback"])
            judge_run_start(run=run)
    for search in _searches(audit):
        if search.status == RunStatus.PENDING:
            adversarial_search_start(search=search)
    audit.status, audit.started_at = AuditStatus.RUNNING, timezone.now()
    audit.save(update_fields=["status", "started_at"])
    return audit


def audit_confirm_problem(audit: JudgeAudit) -> str:
    """Why starting the audit needs a confirmation ("" when it does not): it would measure
    nothing, or send more requests than the limit."""
    estimate = audit.estimate or {}
    http, limit = estimate.get("http_calls", 0), confirm_limit(audit)
    if estimate.get("nothing") and http:
        return (
            f"this audit would measure nothing: {estimate['nothing']}; plan it over every "
            f"perturbation, or confirm to send its {http} requests anyway"
        )
    if http <= limit:
        return ""
    return (
        f"this audit would send up to {http} requests to models, above the limit of {limit}: "
        "confirm to start it"
    )


@transaction.atomic
def audit_plan_again(*, audit: JudgeAudit, vetted_only: bool) -> JudgeAudit:
    """The same battery planned again over every perturbation of the study's kinds (or vetted
    ones only), in place of a pending audit, which is removed with its planned runs."""
    audit = JudgeAudit.objects.select_for_update().get(pk=audit.pk)
    if audit.status != AuditStatus.PENDING:
        raise ValidationError({"audit": "only an audit not started yet is planned again"})
    subjects = [(s.judge, s.strategy) for s in audit.subjects.order_by("pk")]
    again = audit_plan(
        owner=audit.owner,
        study=audit.study,
        dataset=audit.dataset,
        subjects=subjects,
        search_budget=audit.search_budget,
        generator=audit.generator,
        gold_judge=audit.gold_judge,
        label=audit.label,
        vetted_only=vetted_only if audit.study is not None else None,
    )
    runs, searches = _runs(audit), _searches(audit)
    audit.delete()
    JudgeRun.objects.filter(pk__in=[r.pk for r in runs]).delete()
    AdversarialSearch.objects.filter(pk__in=[s.pk for s in searches]).delete()
    return again


@transaction.atomic
def audit_cancel(*, audit: JudgeAudit) -> JudgeAudit:
    """Stop every part: workers stop within a second or so; a resume continues."""
    audit = JudgeAudit.objects.select_for_update().get(pk=audit.pk)
    if audit.finished and audit.status != AuditStatus.FAILED:
        return audit
    for run in _runs(audit):
        judge_run_cancel(run=run)
    for search in _searches(audit):
        adversarial_search_cancel(search=search)
    audit.status, audit.finished_at = AuditStatus.CANCELLED, timezone.now()
    audit.save(update_fields=["status", "finished_at"])
    return audit


@transaction.atomic
def audit_resume(*, audit: JudgeAudit) -> JudgeAudit:
    """Continue every part not done (failed calls are asked again); done parts stay."""
    audit = JudgeAudit.objects.select_for_update().get(pk=audit.pk)
    if audit.status in (AuditStatus.PENDING, AuditStatus.DONE):  # a pending one: Start it
        return audit
    for run in _runs(audit):
        if run.status != RunStatus.DONE or run.failed:
            judge_run_resume(run=run, retry_failed=True)
    for search in _searches(audit):
        adversarial_search_resume(search=search)
    audit.status, audit.finished_at, audit.error = AuditStatus.RUNNING, None, ""
    audit.save(update_fields=["status", "finished_at", "error"])
    return audit


def audit_refresh(audit: JudgeAudit) -> JudgeAudit:
    """A running audit ends when all its parts have: done, or failed (with the first part's
    reason), or cancelled when a part was cancelled on its own."""
    audit.refresh_from_db()
    if audit.status != AuditStatus.RUNNING:
        return audit
    held: list[tuple[str, Any]] = [(f"run {r.pk}", r) for r in _runs(audit)]
    held += [(f"search {s.pk}", s) for s in _searches(audit)]
    if not all(thing.finished for _, thing in held):
        return audit
    failed = [
        f"{name}: {thing.error or 'failed'}" for name, thing in held if thing.status == "failed"
    ]
    cancelled = any(thing.status == RunStatus.CANCELLED for _, thing in held)
    status = AuditStatus.FAILED if failed else AuditStatus.DONE
    if cancelled and not failed:
        status = AuditStatus.CANCELLED
    updated = JudgeAudit.objects.filter(pk=audit.pk, status=AuditStatus.RUNNING).update(
        status=status, finished_at=timezone.now(), error="; ".join(failed)[:5000]
    )
    if updated:
        audit.refresh_from_db()
    return audit


def audits_for(owner: Any) -> Any:
    return JudgeAudit.objects.for_user(owner).select_related("study", "dataset")


__all__ = [
    "HUMAN_RATING_SOURCES",
    "audit_cancel",
    "audit_plan",
    "audit_refresh",
    "audit_resume",
    "audit_start",
    "audits_for",
]
