"""Human judgements of a study, one row per judgement, with stable column names.

Vettings, comparisons, expert votes and ratings (direct assessment) made in the study, and the
ratings released with its datasets; `history` is every save of a judgement (before and after),
`versions` every edit of a perturbed text (each kind of work may add its own tables: see
apps/analysis/kinds.py). Each query streams; no query per row.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.db.models import Count, Sum

from apps.analysis.models import HumanRating
from apps.annotation.models import (
    Assessment,
    Comparison,
    ExpertVote,
    JudgementChange,
    Study,
    Vetting,
    judgement_types,
)
from apps.corpus.models import PerturbationVersion

CHUNK = 2000
#: Each answer's saves, and its time on task: the active seconds of its timed saves, summed
#: (None when none was timed; apps/analysis/definitions/human.py, `item_seconds`).
SAVES = {"saves": Count("changes"), "timed": Sum("changes__active_seconds")}

#: What every answer's row starts with (`judgement_base`, after its "judgement").
BASE_COLUMNS = [
    "id",
    "study",
    "annotator",
    "created_at",
    "updated_at",
    "saves",
    "active_seconds",
]
JUDGEMENT_COLUMNS = [
    "judgement",
    *BASE_COLUMNS,
    "dataset",
    "item",
    "perturbation",
    "kind",
    "criterion",
    "aspect",
    "group",
    "original_first",
    "choice",
    "outcome",
    "verdict",
    "note",
    "edited_version",
    "task",
    "metric",
    "score",
    "scale_min",
    "scale_max",
]

HISTORY_COLUMNS = [
    "change",
    "judgement",
    "judgement_id",
    "study",
    "annotator",
    "created_at",
    "idempotency_key",
    "before",
    "after",
    "active_seconds",
]

VERSION_COLUMNS = [
    "perturbation",
    "item",
    "kind",
    "version",
    "author",
    "created_at",
    "note",
    "text",
]


def _time(value) -> str | None:
    return value.isoformat() if value else None


def judgement_base(kind: str, row: Any, study: Study, person: Any) -> dict[str, Any]:
    return {
        "judgement": kind,
        "id": row.pk,
        "study": study.slug,
        "annotator": person.username,
        "created_at": _time(row.created_at),
        "updated_at": _time(row.updated_at),
        "saves": row.saves,
        "active_seconds": None if row.timed is None else round(row.timed, 1),
    }


def _perturbation(p) -> dict[str, Any]:
    return {
        "dataset": p.item.dataset.name,
        "item": p.item.external_id,
        "perturbation": p.external_id or p.pk,
        "kind": p.kind.slug,
    }


def vetting_rows(study: Study) -> Iterator[dict[str, Any]]:
    rows = (
        Vetting.objects.filter(study=study)
        .select_related(
            "annotator", "perturbation__item__dataset", "perturbation__kind", "edited_version"
        )
        .annotate(**SAVES)
        .order_by("id")
    )
    for v in rows.iterator(chunk_size=CHUNK):
        yield {
            **judgement_base("vetting", v, study, v.annotator),
            **_perturbation(v.perturbation),
            "verdict": v.verdict,
            "note": v.note,
            "edited_version": v.edited_version.number if v.edited_version else None,
        }


def comparison_rows(study: Study) -> Iterator[dict[str, Any]]:
    rows = (
        Comparison.objects.filter(study=study)
        .select_related(
            "annotator", "perturbation__item__dataset", "perturbation__kind", "criterion__aspect"
        )
        .annotate(**SAVES)
        .order_by("id")
    )
    for c in rows.iterator(chunk_size=CHUNK):
        yield {
            **judgement_base("comparison", c, study, c.annotator),
            **_perturbation(c.perturbation),
            "criterion": c.criterion.key,
            "aspect": c.criterion.aspect.slug,
            "group": c.group,
            "original_first": c.original_first,
            "choice": c.choice,
            "outcome": c.outcome,
        }


def vote_rows(study: Study) -> Iterator[dict[str, Any]]:
    rows = (
        ExpertVote.objects.filter(study=study)
        .select_related("expert", "task", "kind", "metric")
        .annotate(**SAVES)
        .order_by("id")
    )
    for v in rows.iterator(chunk_size=CHUNK):
        yield {
            **judgement_base("expert-vote", v, study, v.expert),
            "kind": v.kind.slug,
            "task": v.task.slug,
            "metric": v.metric.slug,
        }


def assessment_rows(study: Study) -> Iterator[dict[str, Any]]:
    """Ratings collected in the study (direct assessment), one per annotator and text."""
    rows = (
        Assessment.objects.filter(study=study)
        .select_related(
            "annotator",
            "unit__item__dataset",
            "unit__perturbation__kind",
            "unit__criterion__aspect",
        )
        .annotate(**SAVES)
        .order_by("id")
    )
    for a in rows.iterator(chunk_size=CHUNK):
        unit, p = a.unit, a.unit.perturbation
        yield {
            **judgement_base("assessment", a, study, a.annotator),
            "dataset": unit.item.dataset.name,
            "item": unit.item.external_id,
            "perturbation": (p.external_id or p.pk) if p else None,
            "kind": p.kind.slug if p else None,
            "criterion": unit.criterion.key,
            "aspect": unit.criterion.aspect.slug,
            "score": a.score,
            "scale_min": a.scale_min,
            "scale_max": a.scale_max,
        }


def rating_rows(study: Study) -> Iterator[dict[str, Any]]:
    """Ratings released with the study's datasets (no save history: they were imported)."""
    rows = (
        HumanRating.objects.filter(item__dataset__studies=study)
        .select_related("item__dataset", "perturbation__kind", "aspect", "metric")
        .order_by("id")
    )
    for r in rows.iterator(chunk_size=CHUNK):
        p = r.perturbation
        yield {
            "judgement": "rating",
            "id": r.pk,
            "study": study.slug,
            "annotator": r.rater,
            "dataset": r.item.dataset.name,
            "item": r.item.external_id,
            "perturbation": (p.external_id or p.pk) if p else None,
            "kind": p.kind.slug if p else None,
            "criterion": r.criterion_name,
            "aspect": r.aspect.slug if r.aspect else None,
            "metric": r.metric.slug if r.metric else None,
            "score": r.score,
            "scale_min": r.scale_min,
            "scale_max": r.scale_max,
        }


def judgement_rows(study: Study) -> Iterator[dict[str, Any]]:
    yield from vetting_rows(study)
    yield from comparison_rows(study)
    yield from vote_rows(study)
    yield from assessment_rows(study)
    yield from rating_rows(study)


def history_rows(study: Study) -> Iterator[dict[str, Any]]:
    rows = JudgementChange.objects.filter(study=study).select_related("user").order_by("id")
    # Changes of a control item's answer are not data either (docs/annotation.md).
    for model in judgement_types():
        rows = rows.exclude(**{f"{model.change_field}__control__isnull": False})
    for change in rows.iterator(chunk_size=CHUNK):
        yield {
            "change": change.pk,
            "judgement": change.judgement,
            "judgement_id": change.target_id,
            "study": study.slug,
            "annotator": change.user.username,
            "created_at": _time(change.created_at),
            "idempotency_key": str(change.idempotency_key),
            "before": change.before,
            "after": change.after,
            "active_seconds": change.active_seconds,
        }


def version_rows(study: Study) -> Iterator[dict[str, Any]]:
    """Every version of the study's perturbed texts beyond the first (annotators' edits)."""
    rows = (
        PerturbationVersion.objects.filter(
            perturbation__in=study.plan_perturbations.values("perturbation"), number__gt=1
        )
        .select_related("perturbation__item", "perturbation__kind", "author")
        .order_by("perturbation_id", "number")
    )
    for v in rows.iterator(chunk_size=CHUNK):
        p = v.perturbation
        yield {
            "perturbation": p.external_id or p.pk,
            "item": p.item.external_id,
            "kind": p.kind.slug,
            "version": v.number,
            "author": v.author.username if v.author else None,
            "created_at": _time(v.created_at),
            "note": v.note,
            "text": v.text,
        }
