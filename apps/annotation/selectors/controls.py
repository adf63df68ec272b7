"""Control items for the study's researchers: the items defined, and every answer given to one
with whether it was right (the analysis app turns these into accuracy per annotator, with its
interval and the study's threshold: apps/analysis/controls.py)."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Q

from apps.annotation.kinds import work_type
from apps.annotation.models import CONTROL_UNITS, ControlItem, Study


@dataclass(frozen=True)
class ControlAnswer:
    """One annotator's answer to one control item."""

    user_id: int
    username: str
    work: str
    control_id: int
    value: object
    right: bool


def control_answers(study: Study) -> list[ControlAnswer]:
    """Every answer to the study's control items (one query per type of work)."""
    controls = {c.pk: c for c in ControlItem.objects.filter(study=study)}
    out: list[ControlAnswer] = []
    if not controls:
        return out
    for slug in CONTROL_UNITS:
        model = work_type(slug).model
        person = model.person_field
        rows = model.answers.filter(study=study, control__isnull=False).values_list(
            f"{person}_id", f"{person}__username", "control_id", model.value_field
        )
        for user_id, username, control_id, value in rows.order_by("id"):
            control = controls[control_id]
            out.append(
                ControlAnswer(user_id, username, slug, control_id, value, control.is_right(value))
            )
    return out


def control_items(study: Study) -> list[ControlItem]:
    """The study's control items, each with `served` and `answered` counts."""
    return list(
        ControlItem.objects.filter(study=study)
        .select_related("perturbation__kind", "criterion", "unit__criterion", "unit__item")
        .annotate(
            served=Count("serves"),
            answered=Count("serves", filter=Q(serves__answered_at__isnull=False)),
        )
        .order_by("work", "id")
    )
