"""Shorthands the tests use to hand out, skip and save one kind of human work by name (the
pages and API go through `Work.next`, `Work.skip` and `Work.submit` of the registered types)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from apps.annotation.models import Comparison, ComparisonSlot, Study, Vetting, VettingSlot
from apps.annotation.services import ASSESSMENT, COMPARISON, VETTING
from apps.annotation.services.work import Saved


def vetting_next(*, study: Study, annotator, now: datetime | None = None) -> VettingSlot | None:
    """The slot this annotator should vet now, leased to them (see services/leases.py)."""
    return VETTING.next(study=study, person=annotator, now=now)


def vetting_skip(*, study: Study, annotator, perturbation_id: int) -> None:
    VETTING.skip(study=study, person=annotator, unit={"perturbation_id": perturbation_id})


def vetting_submit(
    *,
    study: Study,
    annotator,
    perturbation_id: int,
    verdict: str,
    note: str = "",
    idempotency_key: uuid.UUID,
    based_on: int | None = None,
) -> Saved[Vetting]:
    """Save (or change) this annotator's verdict once per key (see `Work.submit`)."""
    return VETTING.submit(
        study=study,
        person=annotator,
        unit={"perturbation_id": perturbation_id},
        answer={"verdict": verdict, "note": note},
        idempotency_key=idempotency_key,
        based_on=based_on,
    )


def comparison_next(*, study: Study, annotator) -> ComparisonSlot | None:
    """This annotator's next pair x criterion, or None when their share is done (or the study
    is archived)."""
    return COMPARISON.next(study=study, person=annotator)


def comparison_skip(*, study: Study, annotator, perturbation_id: int, criterion_id: int) -> None:
    COMPARISON.skip(
        study=study,
        person=annotator,
        unit={"perturbation_id": perturbation_id, "criterion_id": criterion_id},
    )


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
    """Save (or change) a choice once per key; `original_first`: the order the annotator saw
    (not given: the recorded order)."""
    return COMPARISON.submit(
        study=study,
        person=annotator,
        unit={"perturbation_id": perturbation_id, "criterion_id": criterion_id},
        answer={"choice": choice, "original_first": original_first},
        idempotency_key=idempotency_key,
    )


def assessment_submit(
    *, study: Study, annotator, unit_id: int, score: int, idempotency_key, based_on=None
) -> Any:
    """Save (or change) this annotator's rating once per key (see `Work.submit`)."""
    return ASSESSMENT.submit(
        study=study,
        person=annotator,
        unit={"unit_id": unit_id},
        answer={"score": score},
        idempotency_key=idempotency_key,
        based_on=based_on,
    )
