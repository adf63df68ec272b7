"""A run's plan: one pending JudgeCall per (text, quality, order, sample index).

Texts are the selected items' originals (when the run includes them) and their selected
perturbations: by default only vetted ones (see ``vetted``). Pairwise strategies judge each
perturbation against its original, in both orders when the strategy says so, else in one
order drawn from a hash of the pair (so a rerun asks the same way and hits the cache). The
misleading-cue prompt needs expert ratings, which rate originals: other texts are left out.
Everything left out is listed in ``run.problems``.

A task metric applies only to items of its task. A strategy whose prompt does not name the
quality judged (``Strategy.names_quality``) asks one question per text whatever criteria or
metrics were chosen: its calls have neither (the text as a whole), so one measurement is
stored, and analysed, once.

Planning is idempotent: calls are identified by ``JudgeCall.identity`` (unique per run), so
planning twice adds nothing.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice

from django.db.models import Q, QuerySet

from apps.catalog.models import Criterion, Metric
from apps.corpus.models import Perturbation, SourceItem
from apps.judging.models import JudgeCall, JudgeRun
from apps.judging.models.call import call_identity
from apps.judging.prompt_template import placeholders
from apps.judging.prompting import expert_ratings

BATCH = 2000
UNVETTED = (
    "perturbations not vetted valid or score-invariant in the study, nor from a dataset "
    "validated by its publisher (the run takes vetted perturbations; choose all to take them)"
)
Quality = tuple[Criterion | None, Metric | None]


def selected_items(run: JudgeRun) -> QuerySet[SourceItem]:
    if run.study_id is not None:
        items = SourceItem.objects.filter(dataset__studies=run.study_id)
        if run.dataset_id is not None:
            items = items.filter(dataset_id=run.dataset_id)
    else:
        assert run.dataset_id is not None  # a run has a study or a dataset (a constraint)
        items = SourceItem.objects.filter(dataset_id=run.dataset_id)
    if run.item_ids:
        items = items.filter(id__in=run.item_ids)
    return items.select_related("task", "dataset__task").order_by("id").distinct()


def _candidate_perturbations(run: JudgeRun, items: QuerySet[SourceItem]) -> QuerySet[Perturbation]:
    perturbations = Perturbation.objects.filter(item__in=items.values("id"))
    kind_ids = list(run.kinds.values_list("id", flat=True))
    if not kind_ids and run.study is not None:
        kind_ids = list(run.study.kinds.values_list("id", flat=True))
    if kind_ids:
        perturbations = perturbations.filter(kind_id__in=kind_ids)
    if run.perturbation_ids:
        perturbations = perturbations.filter(id__in=run.perturbation_ids)
    return perturbations


def vetted(run: JudgeRun) -> Q:
    """What a vetted-only run takes (methods §3): perturbations vetted valid or score-invariant
    in its study, and those of a dataset already validated by its publisher."""
    accepted = Q(item__dataset__publisher_validated=True)
    if run.study_id is not None:
        from apps.annotation.models import ACCEPTED_VERDICTS, StudyPerturbation

        verdicts = StudyPerturbation.objects.filter(
            study_id=run.study_id, verdict__in=ACCEPTED_VERDICTS
        )
        accepted |= Q(id__in=verdicts.values("perturbation_id"))
    return accepted


def selected_perturbations(run: JudgeRun, items: QuerySet[SourceItem]) -> QuerySet[Perturbation]:
    perturbations = _candidate_perturbations(run, items)
    if run.vetted_only:
        perturbations = perturbations.filter(vetted(run))
    return perturbations.order_by("item_id", "id")


def unvetted_count(run: JudgeRun, items: QuerySet[SourceItem]) -> int:
    """Perturbations a vetted-only run leaves out because nobody vetted them valid."""
    if not run.vetted_only:
        return 0
    return _candidate_perturbations(run, items).exclude(vetted(run)).count()


def selected_qualities(run: JudgeRun) -> list[Quality]:
    """What each text is judged on: criteria and task metrics (a metric judge: itself)."""
    if run.judge.is_metric:
        return [(None, None)]
    criteria = list(run.criteria.select_related("aspect"))
    metrics = list(run.metrics.select_related("task"))
    if not criteria and not metrics and run.study is not None:
        criteria = list(run.study.criteria.select_related("aspect"))
    return [(c, None) for c in criteria] + [(None, m) for m in metrics]


def _hashed_order(perturbation_id: int, quality: Quality) -> bool:
    criterion, metric = quality
    seed = f"{perturbation_id}:{criterion.pk if criterion else 0}:{metric.pk if metric else 0}"
    return hashlib.sha256(seed.encode()).digest()[0] % 2 == 0


@dataclass
class Plan:
    run: JudgeRun
    items: list[SourceItem]
    perturbations: dict[int, list[Perturbation]]
    qualities: list[Quality]
    left_out: Counter[str] = field(default_factory=Counter)

    def texts(self) -> Iterator[tuple[SourceItem, Perturbation | None]]:
        strategy = self.run.strategy
        pairwise = strategy is not None and strategy.pairwise
        for item in self.items:
            if self.run.include_originals:
                if pairwise:
                    self.left_out["pairwise strategies judge perturbations, not originals"] += 1
                else:
                    yield item, None
            if self.run.include_perturbations:
                for perturbation in self.perturbations.get(item.pk, []):
                    yield item, perturbation

    def qualities_for(self, item: SourceItem, *, count: bool = False) -> list[Quality]:
        """The qualities that apply to ``item``: criteria, and metrics of the item's task; one
        quality-less ask when the prompt names no quality (see module)."""
        task_id = item.task_id or item.dataset.task_id
        applicable = [q for q in self.qualities if q[1] is None or q[1].task_id == task_id]
        if count and len(applicable) < len(self.qualities):
            skipped = len(self.qualities) - len(applicable)
            self.left_out["a task metric applies only to items of its task"] += skipped
        strategy = self.run.strategy
        if applicable and strategy is not None and not strategy.names_quality:
            return [(None, None)]
        return applicable

    def calls(self) -> Iterator[JudgeCall]:
        strategy = self.run.strategy
        samples = strategy.samples if strategy is not None else 1
        misleading = strategy is not None and "expert_rating" in placeholders(
            strategy.prompt_template
        )
        for item, perturbation in self.texts():
            for quality in self.qualities_for(item, count=True):
                if misleading and not self._has_ratings(item, perturbation, quality):
                    continue
                for original_first in self._orders(perturbation, quality):
                    for sample_index in range(samples):
                        yield self._call(item, perturbation, quality, original_first, sample_index)

    def _has_ratings(
        self, item: SourceItem, perturbation: Perturbation | None, quality: Quality
    ) -> bool:
        if perturbation is not None:
            self.left_out["the misleading cue needs expert ratings, which rate originals"] += 1
            return False
        if expert_ratings(item, *quality) is None:
            self.left_out["no three expert ratings in metadata['expert_ratings']"] += 1
            return False
        return True

    def _orders(self, perturbation: Perturbation | None, quality: Quality) -> list[bool | None]:
        strategy = self.run.strategy
        if strategy is None or not strategy.pairwise or perturbation is None:
            return [None]
        if strategy.both_orders:
            return [True, False]
        return [_hashed_order(perturbation.pk, quality)]

    def _call(
        self,
        item: SourceItem,
        perturbation: Perturbation | None,
        quality: Quality,
        original_first: bool | None,
        sample_index: int,
    ) -> JudgeCall:
        criterion, metric = quality
        identity = call_identity(
            item_id=item.pk,
            perturbation_id=perturbation.pk if perturbation else None,
            criterion_id=criterion.pk if criterion else None,
            metric_id=metric.pk if metric else None,
            sample_index=sample_index,
            original_first=original_first,
        )
        return JudgeCall(
            run=self.run,
            identity=identity,
            item=item,
            perturbation=perturbation,
            criterion=criterion,
            metric=metric,
            sample_index=sample_index,
            original_first=original_first,
        )


def plan_for(run: JudgeRun) -> Plan:
    items = selected_items(run)
    by_item: dict[int, list[Perturbation]] = {}
    plan = Plan(run, list(items), by_item, selected_qualities(run))
    if run.include_perturbations:
        for perturbation in selected_perturbations(run, items):
            by_item.setdefault(perturbation.item_id, []).append(perturbation)
        if left := unvetted_count(run, items):
            plan.left_out[UNVETTED] += left
    return plan


def batched(calls: Iterable[JudgeCall], size: int = BATCH) -> Iterator[list[JudgeCall]]:
    iterator = iter(calls)
    while batch := list(islice(iterator, size)):
        yield batch
