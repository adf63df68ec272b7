"""The expert survey (methods §4): which (task, kind) pairs a study asks about, an expert's
votes, and the votes per metric of each kind."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

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


def vote_counts(study: Study) -> dict[tuple[int, int], Counter[int]]:
    """(task id, kind id) -> votes per metric id (the expert weights are computed from these
    by the analysis app: apps/analysis/progress.py)."""
    counts: dict[tuple[int, int], Counter[int]] = defaultdict(Counter)
    for task_id, kind_id, metric_id in ExpertVote.objects.filter(study=study).values_list(
        "task_id", "kind_id", "metric_id"
    ):
        counts[(task_id, kind_id)][metric_id] += 1
    return counts
