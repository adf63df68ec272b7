"""A recruited participant's way through their study (docs/annotation.md, "Recruiting a
panel"): which type of work they do next, and when they are finished, which is then saved
on their `Participant` (complete: nothing left for them)."""

from __future__ import annotations

from django.utils import timezone

from apps.accounts.models import Role
from apps.annotation.kinds import work_types
from apps.annotation.models import Participant, Study
from apps.annotation.services.work import Work


def participant_of(*, study: Study, person) -> Participant:
    return Participant.objects.get(study=study, user=person)


def participant_next_work(*, study: Study, person, after: str | None = None) -> Work | None:
    """The first type of work of the study (after the one named `after`, which had nothing
    more for them) that has a unit for the participant; None when they are finished, which
    is then saved."""
    participant = participant_of(study=study, person=person)
    if participant.finished:
        return None
    kinds = [work for work in work_types(Role.ANNOTATOR) if work.asks(study)]
    slugs = [work.slug for work in kinds]
    if after in slugs:
        kinds = kinds[slugs.index(after) + 1 :]
    now = timezone.now()
    for work in kinds:
        if work.holds(study=study, person=person) or work.waiting(
            study=study, person=person, now=now
        ):
            return work
    participant_finish(participant=participant, status=Participant.Status.COMPLETE)
    return None


def participant_finish(*, participant: Participant, status: str) -> None:
    """Record that the participant is done (once: the first reason stands)."""
    Participant.objects.filter(pk=participant.pk, status=Participant.Status.WORKING).update(
        status=status, finished_at=timezone.now()
    )
    participant.refresh_from_db(fields=["status", "finished_at"])
