"""The researcher's progress page and API: annotation's counts, with what the analysis app
computes from them (each annotator's agreement and time on task, the expert weights per kind,
methods §4).

The page lives here, not in the annotation app, because it shows statistics: annotation
never imports analysis (layers: docs/annotation.md, "Progress").
"""

from __future__ import annotations

from dataclasses import dataclass, field

from apps.analysis.annotation_agreement import annotator_agreement
from apps.analysis.time_on_task import study_time
from apps.annotation.models import Study
from apps.annotation.selectors.progress import StudyProgress, study_progress
from apps.annotation.selectors.survey import survey_tasks, vote_counts
from apps.catalog.models import Metric, PerturbationKind, Task


def progress_with_analysis(study: Study) -> StudyProgress:
    """The study's progress, each annotator's row with their agreement (None: no unit
    shared with anyone yet) and time on task (None: no timed answer), and the study's."""
    progress = study_progress(study)
    figures = annotator_agreement(study)
    progress.time = study_time(study)
    for row in progress.annotators:
        row.agreement = figures.get(row.user_id)
        row.time = progress.time.people.get(row.user_id)
    return progress


@dataclass
class KindWeights:
    task: Task
    kind: PerturbationKind
    votes: int
    cells: list[tuple[Metric, int, float | None]] = field(default_factory=list)


def kind_weights(study: Study) -> list[KindWeights]:
    """Votes and expert weights (vote share per metric) of every surveyed (task, kind)."""
    from apps.analysis.stats.discernment import expert_weights  # scipy: only here

    counts = vote_counts(study)
    rows = []
    for task, kind in survey_tasks(study):
        metrics = list(task.metrics.all())
        cast = counts.get((task.pk, kind.pk))
        votes = {m.pk: cast[m.pk] if cast else 0 for m in metrics}
        weights = expert_weights(votes) or {}
        cells = [(m, votes[m.pk], weights.get(m.pk)) for m in metrics]
        rows.append(KindWeights(task, kind, sum(votes.values()), cells))
    return rows
