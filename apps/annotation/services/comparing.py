"""Pairwise comparison (methods §2): slots owned by one annotator each (the criteria design).

Handing out work needs no lock: "next" is the annotator's first open slot in work order,
skipped ones last. The order of the two texts is drawn once per (study, pair, criterion,
annotator), from a hash (`original_shown_first`), so a reload shows the same order, and is
stored with the choice.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from django.utils import timezone

from apps import sql_rows as rows
from apps.annotation.kinds import register
from apps.annotation.models import (
    Choice,
    Comparison,
    ComparisonSlot,
    Study,
    original_shown_first,
    outcome_of,
)
from apps.annotation.selectors.shown import comparison_next_sql
from apps.annotation.selectors.work import comparison_item
from apps.annotation.services.errors import WorkRefused
from apps.annotation.services.plan import (
    comparable_refresh,
    comparison_slots_sync,
    criteria_design_sync,
)
from apps.annotation.services.work import PlanPart, Setup, Unit, Work

__all__ = ["COMPARISON"]


class ComparisonSetup(Setup):
    def plan(self, work: Any, *, study: Study) -> PlanPart:
        problem = criteria_design_sync(study)
        comparable_refresh(study=study)
        comparison_slots_sync(study=study)
        return PlanPart(ComparisonSlot.objects.filter(study=study).count(), problem)


class ComparisonWork(Work):
    slug, name, action = "comparison", "Comparison", "Compare pairs"
    position = 2
    model = Comparison
    answer_keys = ("choice",)
    answer_noun = "choice"
    skipped_message = "Skipped: moved to the end of your queue"
    answers_figure = ("comparisons", "Comparisons", "comparison-count")
    recent_related = ("criterion__aspect",)
    setup = ComparisonSetup()
    slot_model = ComparisonSlot  # owned by one annotator each; the save marks theirs done

    def next(
        self, *, study: Study, person, now: datetime | None = None, page: bool = False
    ) -> Any | None:
        if study.archived:
            return None
        # The slot and what the API shows of it, in one statement.
        found = rows.fetch(comparison_next_sql(), {"study": study.pk, "person": person.pk})
        if not found:
            return None
        columns = rows.columns(ComparisonSlot, "s")
        slot = columns.load(found[0])
        slot.shown = found[0][columns.width :]
        return slot

    def waiting(self, *, study: Study, person, now: datetime) -> bool:
        return ComparisonSlot.objects.filter(
            study=study, annotator=person, done_at__isnull=True
        ).exists()

    def slots_of(self, *, study: Study, person) -> Any:
        return ComparisonSlot.objects.filter(study=study, annotator=person)

    def skip(self, *, study: Study, person, unit: Unit) -> None:
        """Put the pair x criterion back at the end of this annotator's queue."""
        ComparisonSlot.objects.filter(
            study=study, annotator=person, done_at__isnull=True, **unit
        ).update(skipped=True)

    def item(self, *, study: Study, person, unit: Unit, held: bool | None = None) -> Any:
        return comparison_item(study=study, annotator=person, **unit, held=held)

    def checked(self, *, study: Study, unit: Unit, answer: Mapping[str, Any]) -> Unit:
        if answer["choice"] not in Choice.values:
            raise ValueError(f"unknown choice {answer['choice']!r}")
        return unit

    def close(
        self,
        *,
        study: Study,
        person,
        unit: Unit,
        revisit: bool,
        closed: tuple[Any | None] | None = None,
    ) -> Any | None:
        if closed is not None:  # marked done by the save's first read (`slot_model`)
            slot = closed[0]
        else:
            slot = (
                ComparisonSlot.objects.select_for_update()
                .filter(study=study, annotator=person, **unit)
                .first()
            )
        if slot is None and not revisit:
            raise WorkRefused("This comparison is not assigned to you.")
        if slot is not None and slot.done_at is None:
            slot.done_at = timezone.now()
            slot.save(update_fields=["done_at"])
        return slot

    def values(self, *, study, person, unit, answer, earlier, slot, held=None) -> dict[str, Any]:
        # The order the annotator saw; when not given, the recorded one.
        first = answer.get("original_first")
        if first is None:
            first = (
                earlier.original_first
                if earlier
                else original_shown_first(study_id=study.pk, user_id=person.pk, **unit)
            )
        return {
            # A control item has no slot, so no group (0).
            "group": earlier.group if earlier else (slot.group if slot else 0),
            "original_first": first,
            "choice": answer["choice"],
            "outcome": outcome_of(answer["choice"], first),
        }

    def label(self, judgement: Any) -> str:
        return f"{judgement.choice} ({Choice(judgement.choice).label})"


COMPARISON = register(ComparisonWork())
