"""Expert weights (methods §4): each kind's vote share per metric, and how much experts agree."""

from __future__ import annotations

from collections import Counter, defaultdict

from apps.analysis.reports.base import Report, Section, Table, rounded
from apps.analysis.reports.human_agreement import (
    AGREEMENT_COLUMNS,
    AGREEMENT_N,
    agreement_row,
    cells_of,
    reliability_matrix,
)
from apps.analysis.reports.imported_agreement import no_figure_text
from apps.analysis.stats.discernment import expert_weights
from apps.analysis.stats.intervals import share_interval
from apps.annotation.models import ExpertVote, Study
from apps.catalog.models import Metric, PerturbationKind, Task


def weights_by_kind(study: Study) -> dict[tuple[str, str], dict[str, float] | None]:
    """(task slug, kind slug) → {metric slug: weight}, None where no expert voted."""
    votes: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for task, kind, metric in ExpertVote.objects.filter(study=study).values_list(
        "task__slug", "kind__slug", "metric__slug"
    ):
        votes[(task, kind)][metric] += 1
    metrics = defaultdict(list)
    for task, metric in Metric.objects.values_list("task__slug", "slug"):
        metrics[task].append(metric)
    return {
        key: expert_weights({m: counts[m] for m in metrics[key[0]]})
        for key, counts in votes.items()
    }


def build(study: Study) -> Report:
    report = Report("expert-weights", "Expert weights", study.name)
    votes = list(
        ExpertVote.objects.filter(study=study).values_list(
            "task__slug", "kind__slug", "metric__slug", "expert_id"
        )
    )
    counts: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for task, kind, metric, _ in votes:
        counts[(task, kind)][metric] += 1
    names = _names()
    rows = []
    for (task, kind), metric_weights in sorted(weights_by_kind(study).items()):
        experts = sum(counts[(task, kind)].values())
        for metric, weight in (metric_weights or {}).items():
            share = share_interval(counts[(task, kind)][metric], experts)
            rows.append(
                [
                    names["task"].get(task, task),
                    names["kind"].get(kind, kind),
                    names["metric"].get((task, metric), metric),
                    counts[(task, kind)][metric],
                    rounded(weight),
                    rounded(share.ci_low),
                    rounded(share.ci_high),
                    experts,
                ]
            )
    table = Table(
        "expert_weights",
        ["task", "kind", "metric", "votes", "weight", "ci_low", "ci_high", "experts"],
        rows,
        "EW of a kind = the share of experts choosing each metric as most affected, with "
        "its Wilson 95% interval over the experts. N: the experts who voted on the kind "
        "(experts), of whom chose the metric (votes).",
    )
    matrix = reliability_matrix([((t, k), e, m) for t, k, m, e in votes])
    row = agreement_row("most affected metric", matrix)
    agreement = Table(
        "expert_agreement",
        AGREEMENT_COLUMNS,
        [row],
        "Units: a perturbation kind of a task; the experts' choices of the most affected "
        f"metric are the ratings. {AGREEMENT_N}",
    )
    report.sections.append(Section("Weights", tables=[table]))
    missing = no_figure_text([("the experts' choices", cells_of(row))]).strip()
    report.sections.append(Section("Agreement among experts", missing, tables=[agreement]))
    return report


def _names() -> dict[str, dict]:
    """Slugs → names people read, for tasks, kinds and (task, metric)."""
    return {
        "task": dict(Task.objects.values_list("slug", "name")),
        "kind": dict(PerturbationKind.objects.values_list("slug", "name")),
        "metric": {
            (task, slug): name
            for task, slug, name in Metric.objects.values_list("task__slug", "slug", "name")
        },
    }
