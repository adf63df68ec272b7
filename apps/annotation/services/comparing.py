"""Pairwise comparison (methods §2): the next pair x criterion, skip, and saving a choice once.

Each comparison slot belongs to one annotator (the criteria design), so handing out work
needs no lock: "next" is the annotator's first open slot in work order, skipped ones last.
The order of the two texts is drawn once per (study, pair, criterion, annotator), from a hash,
so a reload shows the same order, and is stored with the choice.
"""

from __future__ import annotations

import hashlib
import uuid

from django.utils import timezone

from apps.annotation.models import (
    Choice,
    Comparison,
    ComparisonSlot,
    JudgementChange,
    Study,
    outcome_of,
)
from apps.annotation.services.errors import WorkRefused
from apps.annotation.services.saving import locked_or_created, snapshot, submit_once
from apps.annotation.services.vetting import Saved

COMPARISON_FIELDS = ("group", "original_first", "choice", "outcome")


def comparison_next(*, study: Study, annotator) -> ComparisonSlot | None:
    """This annotator's next pair x criterion, or None when their share is done (or the study
    is archived)."""
    if study.archived:
        return None
    return (
        ComparisonSlot.objects.filter(study=study, annotator=annotator, done_at__isnull=True)
        .order_by("skipped", "position", "criterion_id")
        .first()
    )


def comparison_skip(*, study: Study, annotator, perturbation_id: int, criterion_id: int) -> None:
    """Put the pair x criterion back at the end of this annotator's queue."""
    ComparisonSlot.objects.filter(
        study=study,
        annotator=annotator,
        perturbation_id=perturbation_id,
        criterion_id=criterion_id,
        done_at__isnull=True,
    ).update(skipped=True)


def original_shown_first(
    *, study_id: int, perturbation_id: int, criterion_id: int, user_id: int
) -> bool:
    """The recorded random order of the two texts: a fair coin, fixed per judgement."""
    seed = f"{study_id}:{perturbation_id}:{criterion_id}:{user_id}".encode()
    return hashlib.sha256(seed).digest()[0] % 2 == 0


def comparison_submit(
    *,
    study: Study,
    annotator,
    perturbation_id: int,
    criterion_id: int,
    choice: str,
    original_first: bool | None = None,
    idempotency_key: uuid.UUID,
) -> Saved[Comparison]:
    """Save (or change) a choice about (first, second); a repeated key saves nothing again.

    `original_first` is the order the annotator saw; when not given, the recorded order.
    """
    if choice not in Choice.values:
        raise ValueError(f"unknown choice {choice!r}")

    def save() -> JudgementChange:
        lookup = {
            "study": study,
            "perturbation_id": perturbation_id,
            "criterion_id": criterion_id,
            "annotator": annotator,
        }
        slot = ComparisonSlot.objects.select_for_update().filter(**lookup).first()
        existing = Comparison.objects.filter(**lookup).first()
        if slot is None and existing is None:
            raise WorkRefused("This comparison is not assigned to you.")
        first = original_first
        if first is None:
            first = (
                existing.original_first
                if existing
                else original_shown_first(
                    study_id=study.pk,
                    perturbation_id=perturbation_id,
                    criterion_id=criterion_id,
                    user_id=annotator.pk,
                )
            )
        group = existing.group if existing else slot.group  # type: ignore[union-attr]
        comparison, before = locked_or_created(
            Comparison,
            lookup=lookup,
            values={
                "group": group,
                "original_first": first,
                "choice": choice,
                "outcome": outcome_of(choice, first),
            },
            fields=COMPARISON_FIELDS,
        )
        if slot is not None and slot.done_at is None:
            slot.done_at = timezone.now()
            slot.save(update_fields=["done_at"])
        return JudgementChange.objects.create(
            study=study,
            user=annotator,
            judgement=JudgementChange.Judgement.COMPARISON,
            comparison=comparison,
            idempotency_key=idempotency_key,
            before=before,
            after=snapshot(comparison, COMPARISON_FIELDS),
        )

    change, new = submit_once(
        key=idempotency_key,
        user=annotator,
        judgement=JudgementChange.Judgement.COMPARISON,
        answer={"choice": choice},
        save=save,
    )
    assert change.comparison is not None
    return Saved(change.comparison, new)
