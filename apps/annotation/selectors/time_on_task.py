"""Time on task: the active seconds each person spent on each unit they answered in a study,
as their pages measured it (static/annotation.js; `JudgementChange.active_seconds`). A unit
answered and changed later counts the time of every save. Control items count too: they are
work the person did. One query, whatever the study's size; the figures are the analysis
app's (apps/analysis/time_on_task.py)."""

from __future__ import annotations

from collections import defaultdict

from apps.annotation.models import JudgementChange, Study, judgement_types


def item_seconds(study: Study) -> dict[int, list[float]]:
    """{person's id: the active seconds of each unit they answered with a timed save}."""
    targets = [f"{model.change_field}_id" for model in judgement_types()]
    timed = JudgementChange.objects.filter(study=study, active_seconds__isnull=False)
    per_unit: dict[tuple[int, str, int], float] = defaultdict(float)
    for user_id, judgement, *ids, seconds in timed.values_list(
        "user_id", "judgement", *targets, "active_seconds"
    ).iterator(chunk_size=5000):
        target = next(pk for pk in ids if pk is not None)
        per_unit[(user_id, judgement, target)] += seconds
    by_person: dict[int, list[float]] = defaultdict(list)
    for (user_id, _, _), seconds in per_unit.items():
        by_person[user_id].append(seconds)
    return dict(by_person)
