"""Vetting (methods §3): save a verdict once per submit, and edit a perturbed text."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Generic, TypeVar

from django.db import transaction

from apps.annotation.models import (
    JudgementChange,
    Study,
    StudyPerturbation,
    Verdict,
    Vetting,
    VettingSlot,
    vetting_version,
)
from apps.annotation.services.errors import StaleJudgement, WorkRefused
from apps.annotation.services.leases import vetting_slot_close
from apps.annotation.services.plan import comparable_refresh_one, comparison_slots_sync
from apps.annotation.services.saving import locked_or_created, snapshot, submit_once
from apps.corpus.models import Perturbation, PerturbationVersion

J = TypeVar("J")
VETTING_FIELDS = ("verdict", "note", "edited_version")


@dataclass(frozen=True)
class Saved(Generic[J]):
    """A saved judgement; `new` is False when the submit was a repeat of one already saved."""

    judgement: J
    new: bool


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
    """Save (or change) this annotator's verdict; a repeated key saves nothing again.

    The vetting points at the annotator's own latest edit of the text, if they made one.
    ``based_on`` is the verdict's version the form showed (``vetting_version``); when the
    verdict changed since (another tab saved), StaleJudgement is raised and nothing is saved.
    """
    if verdict not in Verdict.values:
        raise ValueError(f"unknown verdict {verdict!r}")

    def save() -> JudgementChange:
        # Lock the plan row first: vettings of one perturbation queue up here, so the
        # consensus below always counts every committed vetting.
        plan_row = (
            StudyPerturbation.objects.select_for_update()
            .filter(study=study, perturbation_id=perturbation_id)
            .first()
        )
        if plan_row is None:
            raise WorkRefused("This perturbation is not part of the study.")
        lookup = {"study": study, "perturbation_id": perturbation_id, "annotator": annotator}
        earlier = Vetting.objects.select_for_update().filter(**lookup).first()
        if based_on is not None and vetting_version(earlier) != based_on:
            raise StaleJudgement(
                "Your verdict on this item was changed in another tab or window since this page "
                f"was opened (it is now: {earlier.get_verdict_display() if earlier else 'none'})."
                " Nothing was saved; reload the page to see it and answer again."
            )
        vetting_slot_close(
            study=study,
            annotator=annotator,
            perturbation_id=perturbation_id,
            revisit=earlier is not None,
        )
        edit = (
            PerturbationVersion.objects.filter(perturbation_id=perturbation_id, author=annotator)
            .order_by("-number")
            .first()
        )
        vetting, before = locked_or_created(
            Vetting,
            lookup=lookup,
            values={"verdict": verdict, "note": note, "edited_version": edit},
            fields=VETTING_FIELDS,
            locked=earlier,
        )
        change = JudgementChange.objects.create(
            study=study,
            user=annotator,
            judgement=JudgementChange.Judgement.VETTING,
            vetting=vetting,
            idempotency_key=idempotency_key,
            before=before,
            after=snapshot(vetting, VETTING_FIELDS),
        )
        if comparable_refresh_one(study=study, row=plan_row):
            comparison_slots_sync(study=study, perturbation_ids=[perturbation_id])
        return change

    change, new = submit_once(
        key=idempotency_key,
        user=annotator,
        judgement=JudgementChange.Judgement.VETTING,
        answer={"verdict": verdict, "note": note},
        save=save,
    )
    assert change.vetting is not None
    return Saved(change.vetting, new)


@transaction.atomic
def perturbation_edit(
    *, study: Study, annotator, perturbation_id: int, text: str, note: str = ""
) -> PerturbationVersion:
    """Save the annotator's correction of a perturbed text as a new version.

    Version 1 (what was generated or imported) is kept; if it was never recorded, it is
    recorded first so the edit cannot overwrite it.
    """
    if not text.strip():
        raise ValueError("the text is empty")
    if not may_vet(study=study, annotator=annotator, perturbation_id=perturbation_id):
        raise WorkRefused("This item is not assigned to you.")
    perturbation = Perturbation.objects.select_for_update().get(pk=perturbation_id)
    if not perturbation.versions.exists():
        PerturbationVersion.objects.create(
            perturbation=perturbation,
            number=1,
            text=perturbation.text,
            explanation=perturbation.explanation,
        )
    return perturbation.revise(text=text, author=annotator, note=note)


def may_vet(*, study: Study, annotator, perturbation_id: int) -> bool:
    """True when the annotator holds a slot of this perturbation or has vetted it."""
    lookup = {"study": study, "perturbation_id": perturbation_id, "annotator": annotator}
    return (
        VettingSlot.objects.filter(**lookup).exists() or Vetting.objects.filter(**lookup).exists()
    )
