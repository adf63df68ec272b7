"""A recruited participant's way through their study (docs/annotation.md, "Recruiting a
panel"): their quota, held in the hand-out itself, which type of work they do next, and when
they are finished, which is then saved on their `Participant`: complete, or screened out by
the attention check (more failed control items than the panel allows among their first
units; their answers are kept, and left out of the reports by default).

The quota counts the units a participant answered or holds, control items included: a unit
put back (skip) or lost to a lapsed lease does not count. Every hand-out of a participant
locks their `Participant` row, so their requests (two tabs) take turns; after the type's own
`next` (which may renew a unit they hold or claim a new one) the count is read again in the
same transaction, and a claim that would pass the quota is rolled back. So nobody is ever
handed more than their quota, on PostgreSQL under any number of concurrent requests, and on
SQLite, whose write transactions are serialised.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from apps.accounts.models import Role
from apps.annotation.kinds import asks, work_types
from apps.annotation.models import ControlServe, Panel, Participant, Study
from apps.annotation.selectors.panel import screen_failures
from apps.annotation.selectors.work_counts import answers_of
from apps.annotation.services.panel import panel_of, panel_seat_refill
from apps.annotation.services.work import Work

#: The hand-out a participant's is wrapped around (services/controls.py, `hand_out`).
HandOut = Callable[..., Any]


class _OverQuota(Exception):
    """A claim that passed the quota: its transaction is rolled back."""


def participant_of(*, study: Study, person) -> Participant:
    return Participant.objects.get(study=study, user=person)


def _kinds(study: Study) -> list[Work]:
    return [work for work in work_types(Role.ANNOTATOR) if asks(work, study)]


def units_used(*, study: Study, person) -> int:
    """The units the participant answered or holds now, control items included."""
    used = 0
    for work in _kinds(study):
        used += answers_of(work, study, person).count() + work.holds(study=study, person=person)
    held = ControlServe.objects.filter(
        study=study, annotator=person, answered_at__isnull=True, skipped=False
    )
    return used + held.count()


def _holds(work: Work, study: Study, person) -> bool:
    """Whether the participant holds a unit of this type: a real one or a control item."""
    return work.holds(study=study, person=person) or (
        ControlServe.objects.filter(
            study=study, annotator=person, work=work.slug, answered_at__isnull=True, skipped=False
        ).exists()
    )


def participant_hand_out(
    work: Work, *, study: Study, person, now: datetime, page: bool, hand: HandOut
) -> Any | None:
    """`hand` (the hand-out) for a participant, within their quota: None once they are
    finished, or when a new unit would pass their quota (see the module docstring)."""
    try:
        with transaction.atomic():
            participant = Participant.objects.select_for_update().get(study=study, user=person)
            if participant.finished:
                return None
            panel = panel_of(study)
            if _screened(panel, participant):
                return None
            quota = panel.items_per_participant
            if quota is None:
                return hand(work, study=study, person=person, now=now, page=page)
            if units_used(study=study, person=person) >= quota and not _holds(work, study, person):
                return None
            slot = hand(work, study=study, person=person, now=now, page=page)
            if slot is not None and units_used(study=study, person=person) > quota:
                raise _OverQuota
            return slot
    except _OverQuota:
        return None


def participant_next_work(*, study: Study, person, after: str | None = None) -> Work | None:
    """The first type of work of the study (after the one named `after`, which had nothing
    more for them) that has a unit for the participant; None when they are finished (their
    quota done, or nothing left for them), which is then saved."""
    participant = participant_of(study=study, person=person)
    panel = panel_of(study)
    if participant.finished or _screened(panel, participant):
        return None
    kinds = _kinds(study)
    slugs = [work.slug for work in kinds]
    if after in slugs:
        kinds = kinds[slugs.index(after) + 1 :]
    quota = panel.items_per_participant
    spent = quota is not None and units_used(study=study, person=person) >= quota
    now = timezone.now()
    for work in kinds:
        if _holds(work, study, person):
            return work
        if not spent and work.waiting(study=study, person=person, now=now):
            return work
    participant_finish(participant=participant, status=Participant.Status.COMPLETE)
    return None


def _screened(panel: Panel, participant: Participant) -> bool:
    """Whether the attention check stops the participant now (then saved): more failed
    control items than allowed among their first `screen_items` units."""
    if not panel.screen_items:
        return False
    failed = screen_failures(study=panel.study, person=participant.user, first=panel.screen_items)
    if failed <= panel.screen_failures:
        return False
    participant_finish(participant=participant, status=Participant.Status.SCREENED_OUT)
    return True


def participant_finish(*, participant: Participant, status: str) -> None:
    """Record that the participant is done (once: the first reason stands); what they hold
    and have not answered goes back to the queue at once (a screened-out participant can
    then save nothing more)."""
    finished = Participant.objects.filter(
        pk=participant.pk, status=Participant.Status.WORKING
    ).update(status=status, finished_at=timezone.now())
    participant.refresh_from_db(fields=["status", "finished_at"])
    if finished:
        for work in _kinds(participant.study):
            work.release(study=participant.study, person=participant.user)
        if status == Participant.Status.SCREENED_OUT:
            panel_seat_refill(user=participant.user)  # a seat of a group: for the next one
