"""Study set-up by its researcher: create, change, archive (see docs/annotation.md)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

from apps.accounts.models import Role
from apps.annotation.models import Study, StudyMembership
from apps.annotation.models.study import KIND_PROGRESS_FIELDS, KIND_SETUP_FIELDS
from apps.annotation.services.plan import study_plan_request

#: What a researcher sets on a study, in the order the set-up page and the API show it.
SETUP_FIELDS = (
    "name",
    "description",
    "guidelines",
    "datasets",
    "kinds",
    "criteria",
    "vetting_overlap",
    "comparison_groups",
    "comparisons_need_vetting",
    *KIND_SETUP_FIELDS,  # each kind's own (models/study.py, `study_settings`)
    "lease_minutes",
    "vetted_only_default",
)
#: Control items: how often they come, and what a low accuracy does (the controls page and
#: the API; services/controls.py).
CONTROL_FIELDS = ("control_every", "control_threshold", "control_exclude")
#: What a study works on (many-to-many): its datasets, kinds, criteria (compared under) and
#: those of each kind's own settings (`study_settings`).
RELATIONS = tuple(field.name for field in Study._meta.many_to_many if field.name in SETUP_FIELDS)
#: Study fields a researcher sets (besides its relations).
STUDY_FIELDS = tuple(name for name in (*SETUP_FIELDS, *CONTROL_FIELDS) if name not in RELATIONS)
#: The annotation settings the progress page (and `PATCH settings/`) changes.
SETTINGS_FIELDS = (
    "vetting_overlap",
    "comparison_groups",
    "comparisons_need_vetting",
    *KIND_PROGRESS_FIELDS,
    "lease_minutes",
    "guidelines",
    "confirm_above_requests",
)


def study_slug(name: str) -> str:
    """A slug from the name, numbered when taken."""
    base = slugify(name)[:40] or "study"
    slug, n = base, 1
    while Study.objects.filter(slug=slug).exists():
        n += 1
        slug = f"{base}-{n}"
    return slug


@transaction.atomic
def study_create(
    *, owner, annotators: Iterable[Any] = (), experts: Iterable[Any] = (), **fields: Any
) -> Study:
    """A new study owned by `owner`, its plan built (or queued) at once. `fields`: the
    settings (`STUDY_FIELDS`) and what it works on (`RELATIONS`: datasets, kinds, criteria,
    assessment criteria); `annotators`, `experts`: existing accounts that join it (before the
    plan is built, so the criteria design has them)."""
    settings = {k: v for k, v in fields.items() if k in STUDY_FIELDS}
    study = Study.objects.create(owner=owner, slug=study_slug(settings["name"]), **settings)
    _relations_set(study, {name: fields.get(name, ()) for name in RELATIONS})
    StudyMembership.objects.bulk_create(
        [StudyMembership(study=study, user=user, role=Role.ANNOTATOR) for user in annotators]
        + [StudyMembership(study=study, user=user, role=Role.EXPERT) for user in experts]
    )
    study_plan_request(study=study)
    return study


@transaction.atomic
def study_update(*, study: Study, **fields: Any) -> Study:
    """Change what is given (a relation left out or None: unchanged) and bring the plan up to
    date. Judgements and work done or held are kept (see services.plan)."""
    for name, value in fields.items():
        if name in STUDY_FIELDS:
            setattr(study, name, value)
    study.full_clean(exclude=["slug", "owner"])
    study.save()
    _relations_set(study, {name: fields.get(name) for name in RELATIONS})
    study_plan_request(study=study)
    return study


def _relations_set(study: Study, relations: dict[str, Iterable[Any] | None]) -> None:
    for relation, values in relations.items():
        if values is not None:
            getattr(study, relation).set(values)


@transaction.atomic
def study_archive(*, study: Study, archived: bool = True) -> Study:
    """Archive (or bring back) a study: it leaves members' lists; nothing is deleted."""
    study.archived_at = timezone.now() if archived else None
    study.save(update_fields=["archived_at"])
    return study
