"""The panel's review page (docs/annotation.md, "Recruiting a panel"): each participant's
progress, accuracy on control items, time on task, answers and agreement with the others,
read in bulk (two queries per type of work, none per participant).

Agreement is pairwise: of every other person's real answer on a unit the participant
answered (anyone's, recruited or not), the share equal to the participant's.

Time on task is counted from the server's clock: an item's time runs from the participant's
previous answer (or their joining) to their answer on it; a gap longer than `IDLE_SECONDS`
(a tab left open, a break) counts as `IDLE_SECONDS`, so idle time does not inflate it.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from statistics import median
from typing import Any

from apps.accounts.models import Role
from apps.annotation.kinds import work_types
from apps.annotation.models import ControlItem, Panel, Participant, Study

IDLE_SECONDS = 300


def active_seconds(start: datetime, answered: Sequence[datetime]) -> list[float]:
    """The time spent on each item (see the module docstring), in the order answered."""
    spent, previous = [], start
    for moment in sorted(answered):
        spent.append(min(max((moment - previous).total_seconds(), 0.0), IDLE_SECONDS))
        previous = moment
    return spent


@dataclass
class ParticipantRow:
    """One participant on the review page."""

    participant: Participant
    answered_at: list[datetime] = field(default_factory=list)
    controls: list[bool] = field(default_factory=list)  # right or not, per control answered
    values: Counter[str] = field(default_factory=Counter)  # their real answers
    agreed: int = 0  # others' answers on their units equal to theirs
    compared: int = 0  # others' answers on their units

    @property
    def answered(self) -> int:
        return len(self.answered_at)

    @property
    def seconds(self) -> list[float]:
        return active_seconds(self.participant.joined_at, self.answered_at)

    @property
    def total_seconds(self) -> float:
        return sum(self.seconds)

    @property
    def median_seconds(self) -> float | None:
        return median(self.seconds) if self.answered_at else None

    @property
    def accuracy(self) -> float | None:
        return sum(self.controls) / len(self.controls) if self.controls else None

    @property
    def agreement(self) -> float | None:
        return self.agreed / self.compared if self.compared else None

    @property
    def same_answer(self) -> float | None:
        """The share of their real answers that are their most frequent one (straight-lining
        shows as 100%)."""
        total = sum(self.values.values())
        return self.values.most_common(1)[0][1] / total if total else None


@dataclass(frozen=True)
class PanelReview:
    rows: list[ParticipantRow]
    quota: int | None

    @property
    def median_total_seconds(self) -> float | None:
        totals = [row.total_seconds for row in self.rows if row.answered]
        return median(totals) if totals else None

    @property
    def median_item_seconds(self) -> float | None:
        items = [s for row in self.rows for s in row.seconds]
        return median(items) if items else None


def panel_review(study: Study) -> PanelReview:
    """Every participant of the study with their figures (see the module docstring)."""
    participants = Participant.objects.filter(study=study).select_related("user")
    participants = participants.order_by("joined_at", "id")
    rows = {p.user_id: ParticipantRow(p) for p in participants}
    controls = {c.pk: c for c in ControlItem.objects.filter(study=study)}
    for work in work_types(Role.ANNOTATOR):
        model = work.model
        person = f"{model.person_field}_id"
        answers = model.answers.filter(study=study, **{f"{person}__in": list(rows)})
        for user_id, created, control, value in answers.values_list(
            person, "created_at", "control_id", model.value_field
        ):
            row = rows[user_id]
            row.answered_at.append(created)
            if control is not None:
                row.controls.append(controls[control].is_right(value))
            else:
                row.values[str(value)] += 1
    _agreement(study, rows)
    quota = Panel.objects.filter(study=study).values_list("items_per_participant", flat=True)
    return PanelReview(list(rows.values()), quota.first())


def _agreement(study: Study, rows: dict[int, ParticipantRow]) -> None:
    """Count each participant's agreement with the others (see the module docstring)."""
    by_unit: dict[tuple[Any, ...], list[tuple[int, Any]]] = defaultdict(list)
    for work in work_types(Role.ANNOTATOR):
        for unit, person, value in work.agreement_rows(study):
            by_unit[unit].append((person, value))
    for answers in by_unit.values():
        for person, value in answers:
            if (row := rows.get(person)) is not None:
                others = [theirs for who, theirs in answers if who != person]
                row.agreed += sum(theirs == value for theirs in others)
                row.compared += len(others)


def decisions(study: Study) -> list[tuple[str, str, str]]:
    """(participant id, decision, reason) of every participant decided on, in the order
    they joined: what the platforms import."""
    decided = Participant.objects.filter(study=study).exclude(decision="")
    return list(
        decided.order_by("joined_at", "id").values_list("external_id", "decision", "reason")
    )
