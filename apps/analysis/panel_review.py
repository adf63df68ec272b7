"""The figures of a recruited panel's review page (docs/annotation.md, "Recruiting a panel"):
each participant's accuracy on control items (Wilson interval), agreement with the others and
time on task, defined and computed as on the progress page (apps/analysis/controls.py,
annotation_agreement.py, time_on_task.py), beside what annotation counts of them
(apps/annotation/selectors/panel_review.py); and the panel's medians of time on task."""

from __future__ import annotations

from dataclasses import dataclass

from apps.analysis.annotation_agreement import agreement_shares
from apps.analysis.controls import ControlAccuracy, control_accuracy
from apps.analysis.time_on_task import PersonTime, StudyTime, time_on_task
from apps.annotation.models import Participant, Study
from apps.annotation.selectors.panel_review import ParticipantRow, panel_review
from apps.annotation.selectors.time_on_task import item_seconds


@dataclass(frozen=True)
class ParticipantFigures:
    row: ParticipantRow
    controls: ControlAccuracy | None
    #: (share of their answers matching the others' plurality, units compared)
    agreement: tuple[float, int] | None
    time: PersonTime | None
    #: The active seconds of each unit they answered with a timed save.
    seconds: list[float]

    @property
    def participant(self) -> Participant:
        return self.row.participant


@dataclass(frozen=True)
class PanelFigures:
    participants: list[ParticipantFigures]
    quota: int | None
    #: Time on task over the participants alone.
    time: StudyTime


def panel_figures(study: Study) -> PanelFigures:
    review = panel_review(study)
    controls = {row.user_id: row for row in control_accuracy(study)}
    agreement = agreement_shares(study)
    seconds = item_seconds(study)
    people = [row.participant.user_id for row in review.rows]
    time = time_on_task({person: seconds.get(person, []) for person in people})
    return PanelFigures(
        [
            ParticipantFigures(
                row,
                controls.get(person),
                agreement.get(person),
                time.people.get(person),
                seconds.get(person, []),
            )
            for row, person in zip(review.rows, people, strict=True)
        ],
        review.quota,
        time,
    )
