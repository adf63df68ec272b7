"""A study's people, managed by its researcher: add, create accounts, change roles, remove."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from apps.accounts.permissions import allow
from apps.accounts.requests import AuthedRequest
from apps.accounts.services import invitation_url
from apps.annotation.forms import MemberAddForm, MemberRoleForm, MembersCreateForm
from apps.annotation.models import Study
from apps.annotation.permissions import IsStudyOwner, study_access
from apps.annotation.selectors import study_members
from apps.annotation.services.members import (
    study_member_add,
    study_member_remove,
    study_member_role_set,
    study_members_create,
)

TEMPLATE = "annotation/members.html"


def _page(request: AuthedRequest, study: Study, status: int = 200, **forms) -> HttpResponse:
    context = {
        "study": study,
        "members": study_members(study),
        "add_form": forms.get("add_form") or MemberAddForm(),
        "create_form": forms.get("create_form") or MembersCreateForm(),
        "role_form": MemberRoleForm(),
    }
    return render(request, TEMPLATE, context, status=status)


@allow(IsStudyOwner)
def members(request: AuthedRequest, pk: int) -> HttpResponse:
    return _page(request, study_access(request, pk).study)


@allow(IsStudyOwner)
@require_POST
def member_add(request: AuthedRequest, pk: int) -> HttpResponse:
    study = study_access(request, pk).study
    form = MemberAddForm(request.POST)
    if form.is_valid():
        try:
            added = study_member_add(study=study, **form.cleaned_data)
        except ValidationError as exc:
            form.add_error("username", exc)
        else:
            messages.success(request, f"{added.user.username} is a member ({added.role}).")
            return redirect("study-members", pk=study.pk)
    return _page(request, study, 400, add_form=form)


@allow(IsStudyOwner)
@never_cache
@require_POST
def members_create(request: AuthedRequest, pk: int) -> HttpResponse:
    """New accounts; their passwords or invitation links are shown on this answer only."""
    study = study_access(request, pk).study
    form = MembersCreateForm(request.POST, request.FILES)
    if form.is_valid():
        data = form.cleaned_data
        try:
            made = study_members_create(
                study=study,
                usernames=data["usernames"],
                role=data["role"],
                passwords=data["access"] == "password",
            )
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            accounts = [
                {
                    "username": account.user.username,
                    "password": account.password,
                    "link": invitation_url(request, account),
                }
                for account in made
            ]
            context = {"study": study, "accounts": accounts, "role": data["role"]}
            return render(request, "annotation/members_created.html", context)
    return _page(request, study, 400, create_form=form)


@allow(IsStudyOwner)
@require_POST
def member_role(request: AuthedRequest, pk: int, member_pk: int) -> HttpResponse:
    study = study_access(request, pk).study
    membership = get_object_or_404(study.memberships.select_related("user"), pk=member_pk)
    form = MemberRoleForm(request.POST)
    if form.is_valid():
        study_member_role_set(membership=membership, role=form.cleaned_data["role"])
        messages.success(request, f"{membership.user.username} is now {membership.role}.")
    else:
        messages.error(request, "Choose a role.")
    return redirect("study-members", pk=study.pk)


@allow(IsStudyOwner)
@require_POST
def member_remove(request: AuthedRequest, pk: int, member_pk: int) -> HttpResponse:
    study = study_access(request, pk).study
    membership = get_object_or_404(study.memberships.select_related("user"), pk=member_pk)
    study_member_remove(membership=membership)
    messages.success(
        request, f"{membership.user.username} removed; their judgements stay in the data."
    )
    return redirect("study-members", pk=study.pk)
