"""A study's people: add by username or as new accounts, change roles, remove.

Removing a member keeps every judgement they made; vettings they held but had not finished go
back to the queue. After each change the plan is brought up to date (the criteria design
depends on who annotates).
"""

from __future__ import annotations

from collections.abc import Sequence

from django.core.exceptions import ValidationError
from django.db import transaction

from apps.accounts.models import Role, User
from apps.accounts.services import NewAccount, accounts_create
from apps.annotation.kinds import work_types
from apps.annotation.models import Study, StudyMembership
from apps.annotation.services.plan import study_plan_request


def _role_checked(role: str) -> str:
    if role not in Role.values:
        raise ValidationError(f"Unknown role {role!r}: use one of {', '.join(Role.values)}.")
    return role


@transaction.atomic
def study_member_add(*, study: Study, username: str, role: str) -> StudyMembership:
    """Add an existing account (or change the role of a member already there)."""
    _role_checked(role)
    user = User.objects.filter(username=username).first()
    if user is None:
        raise ValidationError(f"No account is called {username!r}; create it below.")
    if user.pk == study.owner_id:
        raise ValidationError(f"{username} owns this study already.")
    membership, _ = StudyMembership.objects.update_or_create(
        study=study, user=user, defaults={"role": role}
    )
    study_plan_request(study=study)
    return membership


@transaction.atomic
def study_members_create(
    *, study: Study, usernames: Sequence[str], role: str, passwords: bool
) -> list[NewAccount]:
    """New accounts for `usernames`, all members with `role`: all made, or none."""
    _role_checked(role)
    if not usernames:
        raise ValidationError("Give at least one name.")
    made = accounts_create(usernames=usernames, role=role, passwords=passwords)
    StudyMembership.objects.bulk_create(
        StudyMembership(study=study, user=account.user, role=role) for account in made
    )
    study_plan_request(study=study)
    return made


@transaction.atomic
def study_member_role_set(*, membership: StudyMembership, role: str) -> StudyMembership:
    membership.role = _role_checked(role)
    membership.save(update_fields=["role"])
    if role != Role.ANNOTATOR:
        _unfinished_release(membership)
    study_plan_request(study=membership.study)
    return membership


@transaction.atomic
def study_member_remove(*, membership: StudyMembership) -> None:
    """Remove a member; their judgements stay in the study's data and reports."""
    _unfinished_release(membership)
    membership.delete()
    study_plan_request(study=membership.study)


def _unfinished_release(membership: StudyMembership) -> None:
    """Work the member held but had not finished (vettings, ratings) goes back to the queue."""
    for work in work_types():
        work.release(study=membership.study, person=membership.user)
