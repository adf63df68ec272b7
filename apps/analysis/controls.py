"""Each annotator's accuracy on control items (docs/annotation.md, "Control items"), and who
the study's threshold flags or leaves out of the reports.

Accuracy is the share of an annotator's answers to control items that match the known
answer, with its Wilson 95% interval (stats/intervals.py). An annotator is flagged when the
study has a threshold and their accuracy (the point estimate, over at least one answer) is
below it; if the study says so (`control_exclude`), every report leaves a flagged
annotator's answers out (`analysed`).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.db.models import QuerySet

from apps.annotation.models import Judgement, Study
from apps.annotation.selectors.controls import control_answers
from apps.annotation.selectors.panel import screened_out_people

if TYPE_CHECKING:
    from apps.analysis.stats.intervals import Estimate


@dataclass(frozen=True)
class ControlAccuracy:
    user_id: int
    username: str
    right: int
    estimate: Estimate
    flagged: bool
    excluded: bool

    @property
    def n(self) -> int:
        return self.estimate.n

    def as_dict(self) -> dict[str, Any]:
        return {
            "username": self.username,
            "n": self.n,
            "right": self.right,
            "accuracy": round(self.estimate.value, 4),
            "ci_low": round(self.estimate.ci_low, 4),
            "ci_high": round(self.estimate.ci_high, 4),
            "flagged": self.flagged,
            "excluded": self.excluded,
        }


def control_accuracy(study: Study) -> list[ControlAccuracy]:
    """One row per annotator who answered a control item, by name."""
    from apps.analysis.stats.intervals import share_interval  # scipy: only here

    answers: dict[tuple[int, str], list[bool]] = defaultdict(list)
    for answer in control_answers(study):
        answers[(answer.user_id, answer.username)].append(answer.right)
    rows = []
    for (user_id, username), rights in sorted(answers.items(), key=lambda kv: kv[0][1]):
        estimate = share_interval(sum(rights), len(rights))
        flagged = below_threshold(study, estimate.value)
        rows.append(
            ControlAccuracy(
                user_id,
                username,
                sum(rights),
                estimate,
                flagged=flagged,
                excluded=flagged and study.control_exclude,
            )
        )
    return rows


def below_threshold(study: Study, accuracy: float) -> bool:
    threshold = study.control_threshold
    return threshold is not None and accuracy * 100 < threshold


def excluded_people(study: Study) -> set[int]:
    """Annotators whose answers the reports leave out: below the threshold, if the study
    excludes them; and recruited participants the attention check stopped, unless the
    study's panel counts them (docs/annotation.md, "Recruiting a panel")."""
    stopped = screened_out_people(study)
    if study.control_threshold is None or not study.control_exclude:
        return stopped
    return stopped | {row.user_id for row in control_accuracy(study) if row.excluded}


def analysed(model: type[Judgement], study: Study) -> QuerySet[Any]:
    """The answers of `model` a report counts: real ones (never a control item's), without
    the annotators the study's threshold leaves out."""
    rows = model.objects.filter(study=study)
    excluded = excluded_people(study)
    if excluded:
        rows = rows.exclude(**{f"{model.person_field}_id__in": excluded})
    return rows


def excluded_note(study: Study) -> str:
    """A line for a report's notes when the threshold leaves anyone out ("" otherwise)."""
    names = sorted(row.username for row in control_accuracy(study) if row.excluded)
    stopped = len(screened_out_people(study))
    screened = (
        f"{stopped} recruited participant{'s' if stopped != 1 else ''} screened out by the "
        "attention check left out of every figure (the panel's settings may count them)."
        if stopped
        else ""
    )
    if not names:
        return screened
    return (
        f"Left out of every figure (accuracy on control items below "
        f"{study.control_threshold}%, as the study asks): {', '.join(names)}. {screened}"
    ).strip()
