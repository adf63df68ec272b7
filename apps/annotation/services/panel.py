"""Recruiting a panel (docs/annotation.md, "Recruiting a panel"): the study's secret links,
made, rotated and closed by its researchers, and participants joining through one.

A participant arrives with their platform's parameters (`arrival_from`). The first time,
they get an account of their own: the participant role, no password, a member of this study
alone (as an annotator, so the work pages take them); coming back with the same id finds it
again. The study's and the group's places are counted under a lock of the study's panel, so
two arrivals at once never both take the last one.

When the study asks for comparisons, a group's link needs its number of places (participants
per group): its seats are made with their accounts when the link opens, and the plan is
built again, so the criteria design gives each seat its criteria in its group before anyone
arrives (Hu et al.'s groups, filled in turn); an arrival through the link takes a free seat.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field

from django.db import transaction
from django.utils import timezone

from apps.accounts.models import Role, User
from apps.annotation.models import (
    ComparisonSlot,
    CriterionAssignment,
    Panel,
    PanelLink,
    PanelSeat,
    Participant,
    Study,
    StudyMembership,
)
from apps.annotation.models.panel import new_token

#: The platforms, by the parameter carrying the participant's id, with the other
#: parameters they add (kept with the participant).
PLATFORMS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("prolific", "PROLIFIC_PID", ("STUDY_ID", "SESSION_ID")),
    ("mturk", "workerId", ("assignmentId", "hitId")),
    ("other", "participant", ()),
)
#: The parameter naming the platform's session of a participant (none for "other").
SESSIONS = {"prolific": "SESSION_ID", "mturk": "assignmentId"}
OTHER_SESSION = (
    "This study resumes only in the platform session you started in: open it again from "
    "the same place on your platform, in the browser you began in."
)
#: What a participant id may be: platform ids are letters and digits; nothing that a page
#: or a CSV file would read as markup or a formula.
ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@:-]{0,99}")


class PanelFull(Exception):
    """The study, or the link's group, admits nobody more."""


@dataclass(frozen=True)
class Arrival:
    """Who arrived: their platform, their id there, and the platform's other parameters."""

    platform: str
    external_id: str
    params: dict[str, str] = field(default_factory=dict)


def arrival_from(query: Mapping[str, str]) -> Arrival:
    """The participant named by a link's query string; ValueError saying what is missing."""
    for platform, id_name, others in PLATFORMS:
        value = (query.get(id_name) or "").strip()
        if not value:
            continue
        if not ID_PATTERN.fullmatch(value):
            raise ValueError(f"{id_name} is not a participant id we can use.")
        params = {name: query[name][:200] for name in others if query.get(name)}
        return Arrival(platform, value, params)
    names = ", ".join(id_name for _, id_name, _ in PLATFORMS)
    raise ValueError(f"This link needs your participant id (one of {names}).")


def panel_of(study: Study) -> Panel:
    """The study's panel settings: saved ones, or the defaults (not saved)."""
    try:
        return study.panel
    except Panel.DoesNotExist:
        return Panel(study=study)


# --- links (the study's researchers) ---------------------------------------------------------


@transaction.atomic
def panel_link_open(*, study: Study, group: int | None = None) -> PanelLink:
    """The study's (or the group's) link, made now or opened again with a new secret."""
    if group is not None and not 0 <= group < study.comparison_groups:
        raise ValueError(f"the study has {study.comparison_groups} groups: 1 to that")
    panel, _ = Panel.objects.get_or_create(study=study)
    if group is not None and _seated(study) and panel.participants_per_group is None:
        raise ValueError(
            "set the participants per group first: the study asks for comparisons, and each "
            "of a group's participants takes a place in its criteria design, made in advance"
        )
    link, made = PanelLink.objects.select_for_update().get_or_create(study=study, group=group)
    if not made and link.closed_at is not None:
        link.token, link.closed_at = new_token(), None
        link.save(update_fields=["token", "closed_at"])
    panel_seats_sync(study=study)
    return link


def _seated(study: Study) -> bool:
    """Whether a group's participants take seats: the study asks for comparisons."""
    return study.criteria.exists()


def panel_seats_sync(*, study: Study) -> int:
    """Make the seats each group with a link is missing (participants per group in all),
    with their accounts, and build the plan again when any was made (so the criteria design
    holds them); the seats made. Seats are never taken away (a taken one has answers)."""
    from apps.annotation.services.plan import study_plan_request  # the plan reads every kind

    panel = panel_of(study)
    if not _seated(study) or panel.participants_per_group is None:
        return 0
    links = PanelLink.objects.filter(study=study, group__isnull=False)
    groups = [group for group in links.values_list("group", flat=True) if group is not None]
    made = 0
    for group in groups:
        have = PanelSeat.objects.filter(study=study, group=group).count()
        for _ in range(panel.participants_per_group - have):
            PanelSeat.objects.create(study=study, group=group, user=_account(study))
            made += 1
    if made:
        study_plan_request(study=study)
    return made


def panel_seat_refill(*, user: User) -> None:
    """The seat of a participant the attention check screened out goes to a new account, with
    the seat's criteria and every comparison of them opened again (their answers stay theirs,
    and no report counts them), so the next arrival of the group does that work."""
    seat = PanelSeat.objects.select_for_update().filter(user=user).first()
    if seat is None:
        return
    fresh = _account(seat.study)
    mine = {"study": seat.study, "annotator": user}
    CriterionAssignment.objects.filter(**mine).update(annotator=fresh)
    ComparisonSlot.objects.filter(**mine).update(annotator=fresh, done_at=None, skipped=False)
    seat.user = fresh
    seat.save(update_fields=["user"])


def _account(study: Study) -> User:
    """A participant's account: the participant role, no password, an annotator of the study."""
    user = User(username=_username(study), role=Role.PARTICIPANT)
    user.set_unusable_password()
    user.save()
    StudyMembership.objects.create(study=study, user=user, role=Role.ANNOTATOR)
    return user


def panel_link_rotate(*, link: PanelLink) -> PanelLink:
    """A new secret: the old link stops working at once; participants already in stay."""
    link.token = new_token()
    link.save(update_fields=["token"])
    return link


def panel_link_close(*, link: PanelLink) -> PanelLink:
    """Nobody joins through it any more (those already in may still come back to it)."""
    link.closed_at = timezone.now()
    link.save(update_fields=["closed_at"])
    return link


def open_link(token: str) -> PanelLink | None:
    """The link a token opens, if it is open."""
    return (
        PanelLink.objects.filter(token=token, closed_at__isnull=True)
        .select_related("study")
        .first()
    )


# --- joining ---------------------------------------------------------------------------------


def participant_find(*, study: Study, arrival: Arrival) -> Participant | None:
    """The participant who arrived before with this id on this platform, if any."""
    found = Participant.objects.filter(
        study=study, platform=arrival.platform, external_id=arrival.external_id
    )
    return found.select_related("user").first()


def resume_problem(*, participant: Participant, arrival: Arrival) -> str | None:
    """Why this arrival may not resume as ``participant`` (from another browser), or None:
    when the study requires it, the same platform session as they started in."""
    if not panel_of(participant.study).same_session_required:
        return None
    name = SESSIONS.get(participant.platform)
    started = (participant.platform_params or {}).get(name or "")
    if name is None or not started or arrival.params.get(name) != started:
        return OTHER_SESSION
    return None


@transaction.atomic
def participant_join(*, link: PanelLink, arrival: Arrival) -> tuple[Participant, bool]:
    """The participant this arrival is: found again (False), or made now (True) if the
    study and the link's group have a place left (else PanelFull)."""
    study = link.study
    found = participant_find(study=study, arrival=arrival)
    if found is not None:
        return found, False
    panel = Panel.objects.select_for_update().get(study=study)  # places counted one at a time
    found = participant_find(study=study, arrival=arrival)  # arrived meanwhile, in another tab
    if found is not None:
        return found, False
    _place_check(panel, link.group)
    user = _free_seat(study, link.group) or _account(study)
    participant = Participant.objects.create(
        study=study,
        user=user,
        link=link,
        group=link.group,
        platform=arrival.platform,
        external_id=arrival.external_id,
        platform_params=arrival.params,
    )
    return participant, True


def _free_seat(study: Study, group: int | None) -> User | None:
    """The account of the group's first seat nobody took yet (None: the group has no seats,
    or no link of a group). All taken: the group is full."""
    if group is None:
        return None
    seats = PanelSeat.objects.filter(study=study, group=group)
    if not seats.exists():
        return None
    free = seats.filter(user__participant__isnull=True).select_related("user").first()
    if free is None:
        raise PanelFull("This group of the study has all the participants it needs.")
    return free.user


def _place_check(panel: Panel, group: int | None) -> None:
    """Refuse an arrival when the study, or the group, has all its participants: those the
    attention check screened out free their place (their seat goes to a new account)."""
    joined = Participant.objects.filter(study=panel.study_id).exclude(
        status=Participant.Status.SCREENED_OUT
    )
    if panel.participants_total is not None and joined.count() >= panel.participants_total:
        raise PanelFull("This study has all the participants it needs.")
    per_group = panel.participants_per_group
    if (
        group is not None
        and per_group is not None
        and joined.filter(group=group).count() >= per_group
    ):
        raise PanelFull("This group of the study has all the participants it needs.")


def _username(study: Study) -> str:
    """An account name that says nothing of the person (their platform id is not in it)."""
    return f"p{study.pk}-{secrets.token_hex(5)}"


# --- review (the study's researchers) ---------------------------------------------------------


def participant_decide(*, participant: Participant, decision: str, reason: str = "") -> None:
    """Approve or reject a participant's submission (a rejection needs its reason, which
    the platform shows them); deciding again replaces the decision."""
    reason = reason.strip()
    if decision not in (Participant.Decision.APPROVED, Participant.Decision.REJECTED):
        raise ValueError("the decision is approve or reject")
    if decision == Participant.Decision.REJECTED and not reason:
        raise ValueError("a rejection needs its reason (the platform shows it to them)")
    participant.decision, participant.reason = decision, reason
    participant.decided_at = timezone.now()
    participant.save(update_fields=["decision", "reason", "decided_at"])
