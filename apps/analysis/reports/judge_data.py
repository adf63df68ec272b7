"""Bulk reads of one judge run's scores, shaped for the statistics (no per-row queries).

Scores are averaged over samples in SQL, so a million calls arrive as one row per
(text, criterion-or-metric)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import cast

from django.db.models import Avg, BooleanField, Count, ExpressionWrapper, Q
from django.db.models.functions import Coalesce

from apps.analysis.stats.fbi import Judgements, Preference
from apps.catalog.models import Criterion, DescriptionType, Metric, PerturbationKind
from apps.judging.models import JudgeCall, JudgeRun

Dim = tuple[str, int]  # ("c", criterion id) or ("m", metric id)
#: (kind id, dimension) -> the paired (original, perturbed) scores of its texts.
Paired = dict[tuple[int, Dim], tuple[list[float], list[float]]]


@dataclass
class Dimension:
    key: Dim
    #: The machine name: the criterion's key, the metric's slug, "overall" or the metric
    #: judge's metric (CSV columns, keys of the card's units).
    label: str
    aspect: str = ""
    description_type: str = ""
    #: What people read: "Fluency (default)", the metric's name, "BLEU"; the label if unset.
    name: str = ""

    @property
    def shown(self) -> str:
        return self.name or self.label


@dataclass
class KindInfo:
    slug: str
    name: str
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

    def by_kind_dim(self) -> Paired:
        """Every kind x dimension's paired scores, in one pass."""
        out: Paired = defaultdict(lambda: ([], []))
        for (item, _, dim), (kind, score) in self.perturbed.items():
            if (item, dim) in self.original:
                orig, pert = out[(kind, dim)]
                orig.append(self.original[(item, dim)])
                pert.append(score)
        return out


TYPE_NAMES = dict(DescriptionType.choices)
WHOLE_TEXT: Dim = ("m", 0)  # a call with neither criterion nor metric: the text as a whole


def item_deltas(data: RunScores) -> dict[tuple[int, Dim], dict[int, float]]:
    """(kind id, dimension) -> item -> mean(original - perturbed) over the item's perturbations
    of that kind: the units a bootstrap over items resamples."""
    diffs: dict[tuple[int, Dim], dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for (item, _, dim), (kind, score) in data.perturbed.items():
        if (item, dim) in data.original:
            diffs[(kind, dim)][item].append(data.original[(item, dim)] - score)
    return {
        cell: {item: sum(v) / len(v) for item, v in by_item.items()}
        for cell, by_item in diffs.items()
    }


def _dim(criterion_id: int | None, metric_id: int | None) -> Dim:
    if criterion_id is not None:
        return ("c", criterion_id)
    return ("m", metric_id) if metric_id is not None else WHOLE_TEXT


def one_measurement(run: JudgeRun) -> bool:
    """Whether every call of a text asked the same question: the strategy's prompt names no
    criterion or metric. Such a run holds one measurement per text, however many criteria or
    metrics were chosen (runs planned before planning knew it hold one call per criterion, all
    alike), and is analysed as one (docs/analysis.md). Metric judges' calls name neither
    already."""
    return run.strategy is not None and not run.strategy.names_quality


def run_scores(run: JudgeRun) -> RunScores:
    """Mean parsed score per (text, dimension) of a run, plus the labels they need."""
    data = RunScores(run=run)
    whole = one_measurement(run)
    fields = ["item_id", "perturbation_id", "perturbation__kind_id"]
    if not whole:
        fields += ["criterion_id", "metric_id"]
    rows = (
        JudgeCall.objects.filter(run=run, parse_status="parsed", score__isnull=False)
        .values_list(*fields)
        .annotate(mean=Avg("score"), n=Count("id"))
        .order_by()
    )
    items = set()
    for row in rows:
        item, perturbation, kind = row[:3]
        dim = WHOLE_TEXT if whole else _dim(row[3], row[4])
        mean = row[-2]
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
    for pk, key, aspect, aspect_name, dtype in Criterion.objects.filter(
        pk__in=criteria
    ).values_list("id", "key", "aspect__slug", "aspect__name", "description_type"):
        name = f"{aspect_name} ({TYPE_NAMES.get(dtype, dtype).lower()})"
        data.dims[("c", pk)] = Dimension(("c", pk), key, aspect, dtype, name)
    metric_task = {}
    for pk, slug, name, task in Metric.objects.filter(pk__in=metrics).values_list(
        "id", "slug", "name", "task__slug"
    ):
        data.dims[("m", pk)] = Dimension(("m", pk), slug, name=name)
        metric_task[("m", pk)] = task
    if WHOLE_TEXT in _dims(data):
        judge = data.run.judge
        metric = judge.metric if data.run.strategy is None and judge.metric else ""
        label = metric or "overall"
        data.dims[WHOLE_TEXT] = Dimension(
            WHOLE_TEXT, label, name=judge.get_metric_display() if metric else "overall"
        )
    data.kinds = kind_infos({kind for kind, _ in data.perturbed.values()})
    from apps.corpus.models import SourceItem

    tasks = SourceItem.objects.filter(pk__in=items).annotate(
        task_slug=Coalesce("task__slug", "dataset__task__slug")
    )
    for pk, task, metadata in tasks.values_list("id", "task_slug", "metadata"):
        data.item_task[pk] = task or ""
        data.item_ability[pk] = (metadata or {}).get("ability", "")
    _drop_other_tasks(data, metric_task)


def _drop_other_tasks(data: RunScores, metric_task: dict[Dim, str]) -> None:
    """A task metric applies only to items of its task: scores of other items (runs planned
    before planning knew it) are left out."""

    def foreign(item: int, dim: Dim) -> bool:
        task = metric_task.get(dim)
        return task is not None and data.item_task.get(item, task) not in ("", task)

    data.original = {k: v for k, v in data.original.items() if not foreign(k[0], k[1])}
    data.perturbed = {k: v for k, v in data.perturbed.items() if not foreign(k[0], k[2])}


def kind_infos(ids: set[int]) -> dict[int, KindInfo]:
    """What the reports show of each kind, in one query."""
    rows = PerturbationKind.objects.filter(pk__in=ids).values_list(
        "id", "slug", "name", "level", "ability", "score_invariant", "target_aspect_id"
    )
    return {
        pk: KindInfo(slug, name, level, ability, invariant, target)
        for pk, slug, name, level, ability, invariant, target in rows
    }


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


def text_abilities(perturbation_ids: set[int]) -> dict[int, str]:
    """perturbation → its item's FBI ability (``metadata["ability"]``), "" when none."""
    from apps.corpus.models import Perturbation

    rows = Perturbation.objects.filter(pk__in=perturbation_ids).values_list("pk", "item__metadata")
    return {pk: (metadata or {}).get("ability", "") for pk, metadata in rows}


def pairwise_pairs(run: JudgeRun) -> dict[tuple[int, tuple], Judgements]:
    """(kind id, (perturbation, criterion, metric, sample)) → the pair's preferred text with
    the original first, then swapped: the same pair in another judge's run has the same key."""
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
    return {
        (kinds[key], key): (by_order.get(True), by_order.get(False))
        for key, by_order in orders.items()
    }
