"""Bulk reads of one judge run's scores, shaped for the statistics (no per-row queries).

Scores are averaged over samples in SQL, so a million calls arrive as one row per
(text, criterion-or-metric)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import cast

from django.db.models import Avg, BooleanField, Count, ExpressionWrapper, Q

from apps.analysis.stats.fbi import Preference
from apps.catalog.models import Criterion, Metric, PerturbationKind
from apps.judging.models import JudgeCall, JudgeRun

Dim = tuple[str, int]  # ("c", criterion id), ("m", metric id) or OWN: the judge's own score
#: The dimension of calls with neither a criterion nor a metric (a BLEU/chrF/ROUGE-L judge).
OWN: Dim = ("s", 0)


@dataclass
class Dimension:
    key: Dim
    label: str
    aspect: str = ""
    description_type: str = ""


@dataclass
class KindInfo:
    slug: str
    level: str
    ability: str
    score_invariant: bool
    target_aspect_id: int | None


@dataclass
class RunScores:
    run: JudgeRun
    dims: dict[Dim, Dimension] = field(default_factory=dict)
    kinds: dict[int, KindInfo] = field(default_factory=dict)
    original: dict[tuple[int, Dim], float] = field(default_factory=dict)
    perturbed: dict[tuple[int, int, Dim], tuple[int, float]] = field(default_factory=dict)
    item_task: dict[int, str] = field(default_factory=dict)
    item_ability: dict[int, str] = field(default_factory=dict)

    def by_kind_dim(self) -> dict[tuple[int, Dim], tuple[list[float], list[float]]]:
        """Every kind x dimension's paired scores, in one pass."""
        out: dict[tuple[int, Dim], tuple[list[float], list[float]]] = defaultdict(lambda: ([], []))
        for (item, _, dim), (kind, score) in self.perturbed.items():
            if (item, dim) in self.original:
                orig, pert = out[(kind, dim)]
                orig.append(self.original[(item, dim)])
                pert.append(score)
        return out


def _dim(criterion_id: int | None, metric_id: int | None) -> Dim:
    if criterion_id is not None:
        return ("c", criterion_id)
    return ("m", metric_id) if metric_id is not None else OWN


def run_scores(run: JudgeRun) -> RunScores:
    """Mean parsed score per (text, dimension) of a run, plus the labels they need."""
    data = RunScores(run=run)
    rows = (
        JudgeCall.objects.filter(run=run, parse_status="parsed", score__isnull=False)
        .values_list(
            "item_id", "perturbation_id", "perturbation__kind_id", "criterion_id", "metric_id"
        )
        .annotate(mean=Avg("score"), n=Count("id"))
        .order_by()
    )
    items = set()
    for item, perturbation, kind, criterion, metric, mean, _ in rows:
        dim = _dim(criterion, metric)
        items.add(item)
        if perturbation is None:
            data.original[(item, dim)] = mean
        else:
            data.perturbed[(item, perturbation, dim)] = (kind, mean)
    _labels(data, items)
    return data


def _labels(data: RunScores, items: set[int]) -> None:
    criteria = {d[1] for d in _dims(data) if d[0] == "c"}
    metrics = {d[1] for d in _dims(data) if d[0] == "m"}
    for pk, key, aspect, dtype in Criterion.objects.filter(pk__in=criteria).values_list(
        "id", "key", "aspect__slug", "description_type"
    ):
        data.dims[("c", pk)] = Dimension(("c", pk), key, aspect, dtype)
    for pk, slug in Metric.objects.filter(pk__in=metrics).values_list("id", "slug"):
        data.dims[("m", pk)] = Dimension(("m", pk), slug)
    if OWN in _dims(data):
        data.dims[OWN] = Dimension(OWN, data.run.judge.metric or "score")
    kinds = {kind for kind, _ in data.perturbed.values()}
    for pk, slug, level, ability, invariant, target in PerturbationKind.objects.filter(
        pk__in=kinds
    ).values_list("id", "slug", "level", "ability", "score_invariant", "target_aspect_id"):
        data.kinds[pk] = KindInfo(slug, level, ability, invariant, target)
    from apps.corpus.models import SourceItem

    for pk, task, metadata in SourceItem.objects.filter(pk__in=items).values_list(
        "id", "task__slug", "metadata"
    ):
        data.item_task[pk] = task or ""
        data.item_ability[pk] = (metadata or {}).get("ability", "")


def _dims(data: RunScores) -> set[Dim]:
    return {d for _, d in data.original} | {d for _, _, d in data.perturbed}


def score_distribution(run: JudgeRun) -> dict[str, dict[float, int]]:
    """How often each score was given, on originals and on perturbed texts (per call)."""
    out: dict[str, dict[float, int]] = {"originals": {}, "perturbed": {}}
    is_original = ExpressionWrapper(Q(perturbation__isnull=True), output_field=BooleanField())
    rows = (
        JudgeCall.objects.filter(run=run, parse_status="parsed", score__isnull=False)
        .annotate(is_original=is_original)
        .values_list("is_original", "score")
        .annotate(n=Count("id"))
        .order_by()
    )
    for is_original, score, n in rows:
        out["originals" if is_original else "perturbed"][score] = n
    return out


def pairwise_verdicts(
    run: JudgeRun,
) -> dict[int, list[tuple[Preference | None, Preference | None]]]:
    """Per kind: each pair's preferred text with the original first, then swapped."""
    orders: dict[tuple, dict[bool, Preference | None]] = defaultdict(dict)
    kinds: dict[tuple, int] = {}
    rows = JudgeCall.objects.filter(run=run, original_first__isnull=False).values_list(
        "perturbation_id",
        "perturbation__kind_id",
        "criterion_id",
        "metric_id",
        "sample_index",
        "original_first",
        "preferred",
        "parse_status",
    )
    for pert, kind, criterion, metric, sample, first, preferred, status in rows:
        key = (pert, criterion, metric, sample)
        orders[key][bool(first)] = (  # never None: filtered above
            cast(Preference, preferred) if status == "parsed" and preferred else None
        )
        kinds[key] = kind
    out: dict[int, list[tuple[Preference | None, Preference | None]]] = defaultdict(list)
    for key, by_order in orders.items():
        out[kinds[key]].append((by_order.get(True), by_order.get(False)))
    return out
