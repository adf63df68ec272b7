"""The expert survey (methods §4): which (task, kind) pairs a study asks about, an expert's
votes, and the votes per metric of each kind."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from functools import cache
from typing import Any

from django.db import models

from apps import sql_rows as rows
from apps.annotation.models import ExpertVote, Study
from apps.answer_sql import Scalar
from apps.catalog.models import Metric, PerturbationKind, Task
from apps.corpus.models import Dataset, SourceItem


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
class SurveyQuestion:
    """One question of the survey as a vote names it (a kind, a metric): the metric's task,
    the kind, the task's metrics (in order), whether the study's survey asks it, and how
    many other questions the expert has answered."""

    task: Task
    kind: PerturbationKind | None
    metrics: list[Metric]
    asked: bool
    answered_elsewhere: int

    @property
    def unit(self) -> dict[str, int]:
        assert self.kind is not None
        return {"task_id": self.task.pk, "kind_id": self.kind.pk}


def _m2m(name: str) -> tuple[str, str, str]:
    """A many-to-many field of Study: its table, the study's column and the other one."""
    field = Study._meta.get_field(name)
    assert isinstance(field, models.ManyToManyField)
    through = field.remote_field.through._meta.db_table  # type: ignore[union-attr]
    return f'"{through}"', field.m2m_column_name(), field.m2m_reverse_name()


def _asked_sql(task: str, kind: str, kind_task: str) -> str:
    """`survey_tasks`'s condition on a (task, kind) pair as SQL: a kind of the study (q.study),
    made for any task or this one, and a task of the study's items or datasets."""
    kinds, kinds_study, kinds_kind = _m2m("kinds")
    sets, sets_study, sets_set = _m2m("datasets")
    return (
        f"({kind_task} IS NULL OR {kind_task} = {task}) "
        f"AND EXISTS (SELECT 1 FROM {kinds} sk WHERE sk.{kinds_study} = q.study "
        f"AND sk.{kinds_kind} = {kind}) "
        f"AND (EXISTS (SELECT 1 FROM {rows.table(SourceItem)} si JOIN {sets} sd "
        f"ON sd.{sets_set} = si.dataset_id WHERE sd.{sets_study} = q.study "
        f"AND si.task_id = {task}) "
        f"OR EXISTS (SELECT 1 FROM {rows.table(Dataset)} ds JOIN {sets} sd "
        f"ON sd.{sets_set} = ds.id WHERE sd.{sets_study} = q.study AND ds.task_id = {task}))"
    )


def _json_row(model: type[models.Model], alias: str) -> str:
    """A row of `model` as a JSON array of its columns (`rows.Columns` order; a JSON field
    as its text, which the field's conversion reads)."""
    values = [
        f'CAST({alias}."{field.column}" AS TEXT)'
        if isinstance(field, models.JSONField)
        else f'{alias}."{field.column}"'
        for field in model._meta.concrete_fields
    ]
    return rows.json_array(*values)


@cache
def question_sql() -> str:
    """The question a vote names, as one JSON value (a scalar subquery, written once:
    apps/sql_rows.py): [the task's metrics (in no order), the task, the kind or null, asked,
    answered elsewhere], null for no such metric. Its parameters: the study, the expert,
    the kind, the metric. The vote's save reads it in its first step (services/votes.py)."""
    kinds, metrics, votes = (
        rows.table(PerturbationKind),
        rows.table(Metric),
        rows.table(ExpertVote),
    )
    asked = _asked_sql("t.id", "k.id", "k.task_id")
    elsewhere = _asked_sql("v.task_id", "v.kind_id", "vk.task_id")
    metrics_of_task = rows.json_nested(
        f"(SELECT {rows.json_agg(_json_row(Metric, 'm'))} FROM {metrics} m WHERE m.task_id = t.id)"
    )
    kind = rows.json_nested(
        f"CASE WHEN k.id IS NULL THEN NULL ELSE {_json_row(PerturbationKind, 'k')} END"
    )
    answered_elsewhere = (
        f"(SELECT count(*) FROM {votes} v JOIN {kinds} vk ON vk.id = v.kind_id "
        "WHERE v.study_id = q.study AND v.expert_id = q.expert "
        "AND NOT (v.task_id = t.id AND v.kind_id = q.kind) "
        f"AND EXISTS (SELECT 1 FROM {metrics} vm WHERE vm.task_id = v.task_id) AND {elsewhere})"
    )
    question = rows.json_array(
        metrics_of_task,
        _json_row(Task, "t"),
        kind,
        f"k.id IS NOT NULL AND {asked}",
        answered_elsewhere,
    )
    return (
        f"(SELECT {question} "
        "FROM (SELECT CAST(%s AS BIGINT) AS study, CAST(%s AS BIGINT) AS expert, "
        "CAST(%s AS BIGINT) AS kind, "
        f"CAST(%s AS BIGINT) AS metric) q JOIN {metrics} qm ON qm.id = q.metric "
        f"JOIN {rows.table(Task)} t ON t.id = qm.task_id LEFT JOIN {kinds} k ON k.id = q.kind)"
    )


def question_from(value: list[Any] | None) -> SurveyQuestion | None:
    """The question of `question_sql`'s value (None: no such metric)."""
    if value is None:
        return None
    metrics, task, kind, asked, elsewhere = value
    task = rows.columns(Task, "t").load(task)
    kind = rows.columns(PerturbationKind, "k").load(kind) if kind is not None else None
    loaded = [rows.columns(Metric, "m").load(metric) for metric in metrics]
    loaded.sort(key=lambda metric: (metric.position, metric.slug))
    for metric in loaded:
        metric.task = task
    return SurveyQuestion(task, kind, loaded, bool(asked), elsewhere)


def vote_counts(study: Study) -> dict[tuple[int, int], Counter[int]]:
    """(task id, kind id) -> votes per metric id (the expert weights are computed from these
    by the analysis app: apps/analysis/progress.py)."""
    counts: dict[tuple[int, int], Counter[int]] = defaultdict(Counter)
    for task_id, kind_id, metric_id in ExpertVote.objects.filter(study=study).values_list(
        "task_id", "kind_id", "metric_id"
    ):
        counts[(task_id, kind_id)][metric_id] += 1
    return counts


#: What a vote's save reads of its question (services/votes.py, apps/answer_sql.py).
SURVEY_QUESTION = Scalar(question_sql, ("study", "person", "kind_id", "metric"))
