"""Study reads with permissions: a user reaches a study only through their role in it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache

from django.core.exceptions import PermissionDenied
from django.db.models import Count, OuterRef, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.http import Http404
from django.shortcuts import get_object_or_404

from apps import sql_rows as rows
from apps.accounts.models import Role, User
from apps.annotation.models import Comparison, ExpertVote, Study, StudyMembership, Vetting
from apps.corpus.models import Perturbation, SourceItem


@dataclass
class StudyOverview:
    study: Study
    item_count: int
    perturbation_count: int
    perturbations_by_kind: Sequence[Mapping[str, object]]


def studies_for_user(user) -> QuerySet[Study]:
    """Studies a user may open: those they own or belong to (superusers: all)."""
    return Study.objects.for_user(user)


def study_for_user(user, pk: int) -> Study:
    """The study, or 404 if this user may not open it (guessing an id reveals nothing)."""
    return get_object_or_404(studies_for_user(user).select_related("owner"), pk=pk)


def study_for_owner(user, pk: int) -> Study:
    """The study if this user manages it (its owner, or a superuser): 404 for outsiders,
    403 for its members, who may not change it."""
    access = study_access_for_user(user, pk)
    if not access.owner:
        raise PermissionDenied("Only the study's researcher may change its set-up and people.")
    return access.study


def studies_listed(user, *, archived: bool = False) -> QuerySet[Study]:
    """The user's studies for the home page, each with its member count and the user's role
    in it (`member_role`, None for the owner): one query however many studies."""
    members = (
        StudyMembership.objects.filter(study=OuterRef("pk"))
        .order_by()
        .values("study")
        .annotate(n=Count("id"))
        .values("n")
    )
    mine = StudyMembership.objects.filter(study=OuterRef("pk"), user=user).values("role")[:1]
    return (
        Study.objects.filter(pk__in=studies_for_user(user).values("pk"))
        .filter(archived_at__isnull=not archived)
        .select_related("owner")
        .annotate(member_count=Coalesce(Subquery(members), 0), member_role=Subquery(mine))
        .order_by("name")
    )


def study_members(study: Study) -> QuerySet[StudyMembership]:
    """Members with how many judgements each made in the study (one query)."""
    return (
        StudyMembership.objects.filter(study=study)
        .select_related("user")
        .annotate(
            vettings=_count(Vetting, "annotator"),
            comparisons=_count(Comparison, "annotator"),
            votes=_count(ExpertVote, "expert"),
        )
        .order_by("role", "user__username")
    )


def _count(model, user_field: str) -> Coalesce:
    rows = (
        model.objects.filter(study=OuterRef("study"), **{user_field: OuterRef("user")})
        .order_by()
        .values(user_field)
        .annotate(n=Count("id"))
        .values("n")
    )
    return Coalesce(Subquery(rows), 0)


def study_role(user, study: Study) -> str | None:
    """The user's role in this study: researcher for its owner (and superusers), else the
    role of their membership, or None."""
    if user.is_superuser or study.owner_id == user.pk:
        return Role.RESEARCHER
    return (
        StudyMembership.objects.filter(study=study, user=user)
        .values_list("role", flat=True)
        .first()
    )


@dataclass(frozen=True)
class StudyAccess:
    """A study and the user's part in it: its owner (the study's researcher; superusers count
    as owners), a member with a role, or both."""

    study: Study
    owner: bool
    member_role: str | None

    @property
    def role(self) -> str | None:
        """As `study_role`: researcher for the owner, else the member's role."""
        return Role.RESEARCHER if self.owner else self.member_role


@cache
def _access_sql() -> str:
    study, owner = rows.columns(Study, "s"), rows.columns(User, "o")
    return (
        f"SELECT {study.sql}, {owner.sql}, (SELECT m.role FROM {rows.table(StudyMembership)} m "
        "WHERE m.study_id = s.id AND m.user_id = %s LIMIT 1) "
        f'FROM {rows.table(Study)} s JOIN {rows.table(User)} o ON o.id = s."owner_id" '
        "WHERE s.id = %s"
    )


def _study_with_role(user, pk: int) -> tuple[Study | None, str | None]:
    """The study (its owner loaded) and the user's role in it as a member: one statement
    written once (apps/sql_rows.py)."""
    fetched = rows.fetch(_access_sql(), [user.pk, pk])
    if not fetched:
        return None, None
    row = fetched[0]
    study_columns = rows.columns(Study, "s")
    study = study_columns.load(row)
    study.owner = rows.columns(User, "o").load(row, study_columns.width)
    return study, row[-1]


def study_access_for_user(user, pk: int) -> StudyAccess:
    """The study with the user's part in it, in one query (this runs on every request under
    /studies/<pk>/): 404 if they have none, exactly as if it did not exist."""
    study, role = _study_with_role(user, pk)
    if study is None:
        raise Http404("No such study.")
    access = StudyAccess(
        study=study,
        owner=user.is_superuser or study.owner_id == user.pk,
        member_role=role,
    )
    if not access.owner and access.member_role is None:
        raise Http404("No such study.")
    return access


def study_for_role(user, pk: int, *roles: str) -> Study:
    """The study if the user has one of `roles` in it: 404 for outsiders, 403 for members
    with another role."""
    access = study_access_for_user(user, pk)
    if access.role not in roles:
        raise PermissionDenied("Your role in this study does not allow this page.")
    return access.study


def study_overview(study: Study) -> StudyOverview:
    items = SourceItem.objects.filter(dataset__studies=study)
    perturbations = Perturbation.objects.filter(item__dataset__studies=study, kind__studies=study)
    by_kind = list(
        perturbations.values("kind__slug", "kind__name")
        .annotate(n=Count("id"))
        .order_by("kind__slug")
    )
    return StudyOverview(
        study=study,
        item_count=items.count(),
        perturbation_count=sum(row["n"] for row in by_kind),
        perturbations_by_kind=by_kind,
    )
