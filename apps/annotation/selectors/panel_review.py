"""The panel's review page (docs/annotation.md, "Recruiting a panel"): each participant and
what annotation counts of them (their units answered, their real answers by value), read in
bulk (one query per type of work, none per participant); and the decisions as the platforms
import them. Control accuracy, agreement and time on task are the analysis app's figures,
the same as the progress page's (apps/analysis/panel_review.py)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from apps.accounts.models import Role
from apps.annotation.kinds import work_types
from apps.annotation.models import Panel, Participant, Study


@dataclass
class ParticipantRow:
    """One participant: their units answered (control items included) and real answers."""

    participant: Participant
    answered: int = 0
    values: Counter[str] = field(default_factory=Counter)  # their real answers

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


def panel_review(study: Study) -> PanelReview:
    """Every participant of the study, in the order they joined (see the module docstring)."""
    participants = Participant.objects.filter(study=study).select_related("user")
    participants = participants.order_by("joined_at", "id")
    rows = {p.user_id: ParticipantRow(p) for p in participants}
    for work in work_types(Role.ANNOTATOR):
        model = work.model
        person = f"{model.person_field}_id"
        answers = model.answers.filter(study=study, **{f"{person}__in": list(rows)})
        for user_id, control, value in answers.values_list(person, "control_id", model.value_field):
            row = rows[user_id]
            row.answered += 1
            if control is None:
                row.values[str(value)] += 1
    quota = Panel.objects.filter(study=study).values_list("items_per_participant", flat=True)
    return PanelReview(list(rows.values()), quota.first())


def decisions(study: Study) -> list[tuple[str, str, str]]:
    """(participant id, decision, reason) of every participant decided on, in the order
    they joined: what the platforms import."""
    decided = Participant.objects.filter(study=study).exclude(decision="")
    return list(
        decided.order_by("joined_at", "id").values_list("external_id", "decision", "reason")
    )
