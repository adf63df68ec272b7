"""The expert survey (methods §4): which (task, kind) pairs a study asks about, an expert's
votes, and the expert weights they give each kind."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from apps.analysis.stats.discernment import expert_weights
from apps.annotation.models import ExpertVote, Study
from apps.catalog.models import Metric, PerturbationKind, Task
from apps.corpus.models import SourceItem


def study_tasks(study: Study) -> list[Task]:
    """The tasks of the study's source items (an item's own task, else its dataset's)."""
    ids = set(
        SourceItem.objects.filter(dataset__studies=study, task__isnull=False)
        .values_list("task_id", flat=True)
        .distinct()
    )
    ids |= set(study.datasets.filter(task__isnull=False).values_list("task_id", flat=True))
    return list(Task.objects.filter(id__in=ids).prefetch_related("metrics").order_by("name"))


def survey_tasks(study: Study) -> list[tuple[Task, PerturbationKind]]:
    """Every (task, kind) an expert is asked about: the study's kinds under each task that
    has metrics (a kind made for one task only appears under that task)."""
    kinds = list(study.kinds.select_related("target_aspect").order_by("name"))
    return [
        (task, kind)
        for task in study_tasks(study)
        if task.metrics.all()
        for kind in kinds
        if kind.task_id in (None, task.pk)
    ]


@dataclass
class SurveyCard:
    task: Task
    kind: PerturbationKind
    metrics: list[Metric]
    chosen_metric_id: int | None


def survey_cards(study: Study, expert) -> list[SurveyCard]:
    """The expert's survey: one card per (task, kind), with their current vote."""
    votes = {
        (task_id, kind_id): metric_id
        for task_id, kind_id, metric_id in ExpertVote.objects.filter(
            study=study, expert=expert
        ).values_list("task_id", "kind_id", "metric_id")
    }
    return [
        SurveyCard(task, kind, list(task.metrics.all()), votes.get((task.pk, kind.pk)))
        for task, kind in survey_tasks(study)
    ]


@dataclass
class KindWeights:
    task: Task
    kind: PerturbationKind
    votes: int
    cells: list[tuple[Metric, int, float | None]] = field(default_factory=list)


def kind_weights(study: Study) -> list[KindWeights]:
    """Votes and expert weights (vote share per metric) of every surveyed (task, kind)."""
    counts: dict[tuple[int, int], Counter[int]] = defaultdict(Counter)
    for task_id, kind_id, metric_id in ExpertVote.objects.filter(study=study).values_list(
        "task_id", "kind_id", "metric_id"
    ):
        counts[(task_id, kind_id)][metric_id] += 1
    rows = []
    for task, kind in survey_tasks(study):
        metrics = list(task.metrics.all())
        votes = {m.pk: counts[(task.pk, kind.pk)][m.pk] for m in metrics}
        weights = expert_weights(votes) or {}
        rows.append(
            KindWeights(
                task,
                kind,
                sum(votes.values()),
                [(m, votes[m.pk], weights.get(m.pk)) for m in metrics],
            )
        )
    return rows
