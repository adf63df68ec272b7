"""Vetting (methods §3): pooled work, k verdicts per perturbation; and editing a perturbed text.

A verdict changes the perturbation's consensus, and with it whether the perturbation may be
compared (services/plan.py): that happens in the same transaction as the save.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db import transaction

from apps.annotation.kinds import register
from apps.annotation.models import (
    Study,
    StudyPerturbation,
    Verdict,
    Vetting,
    VettingSkip,
    VettingSlot,
)
from apps.annotation.selectors.handed import VETTING_PAGE, VETTING_SHOWN
from apps.annotation.selectors.work import vetting_item
from apps.annotation.services.errors import WorkRefused
from apps.annotation.services.leases import PooledWork
from apps.annotation.services.plan import comparable_refresh_one
from apps.annotation.services.work import PlanPart, Setup, Unit
from apps.answer_sql import Latest, UnitLock
from apps.corpus.models import Perturbation, PerturbationVersion

_NOT_IN_STUDY = "This perturbation is not part of the study."


class VettingSetup(Setup):
    def plan(self, work: Any, *, study: Study) -> PlanPart:
        units = StudyPerturbation.objects.filter(study=study)
        return PlanPart(work.slots_sync(study=study, units=units, key="perturbation_id"))


class VettingWork(PooledWork):
    slug, name, action = "vetting", "Vetting", "Vet perturbations"
    position = 1
    model = Vetting
    slot_model = VettingSlot
    skip_model = VettingSkip
    answer_keys = ("verdict", "note")
    answer_noun = "verdict"
    answers_figure = ("vettings", "Vettings", "vetting-count")
    recent_related = ("perturbation__kind",)
    setup = VettingSetup()
    api_item, page_item = VETTING_SHOWN, VETTING_PAGE
    # Vettings of one perturbation queue up on its plan row, so the consensus computed after
    # the save always counts every committed vetting; the annotator's latest edit of the
    # text is read with it (see `values`).
    lock = UnitLock(
        StudyPerturbation,
        by=("perturbation_id",),
        refusal=_NOT_IN_STUDY,
        latest=Latest(PerturbationVersion, "perturbation_id", "author_id", "number", "latest_edit"),
    )
    # After a new verdict: the other verdicts on the perturbation (the plan row's lock makes
    # them final), for the consensus.
    counts = "verdict"

    def overlap(self, study: Study) -> int:
        return study.vetting_overlap

    def item(self, *, study: Study, person, unit: Unit, held: bool | None = None) -> Any:
        return vetting_item(study=study, annotator=person, **unit, held=held)

    def checked(self, *, study: Study, unit: Unit, answer: Mapping[str, Any]) -> Unit:
        if answer["verdict"] not in Verdict.values:
            raise ValueError(f"unknown verdict {answer['verdict']!r}")
        return unit

    def values(self, *, study, person, unit, answer, earlier, slot, held=None) -> dict[str, Any]:
        # The vetting points at the annotator's own latest edit of the text, if they made one.
        if held is not None:  # the plan row, read with the lock, with the edit (`lock`)
            return {
                "verdict": answer["verdict"],
                "note": answer["note"],
                "edited_version_id": held.latest_edit,
            }
        edit = (
            PerturbationVersion.objects.filter(perturbation_id=unit["perturbation_id"])
            .filter(author=person)
            .order_by("-number")
            .first()
        )
        return {"verdict": answer["verdict"], "note": answer["note"], "edited_version": edit}

    def after_save(self, *, study: Study, judgement: Any, held: Any, counted: Any = None) -> None:
        counts = None
        if counted is not None:  # the others' verdicts, and this new one
            counts = dict(counted)  # decoded by the insert (rows.insert_pair)
            counts[judgement.verdict] = counts.get(judgement.verdict, 0) + 1
        comparable_refresh_one(study=study, row=held, counts=counts, slots=True)

    def label(self, judgement: Any) -> str:
        return judgement.get_verdict_display()


VETTING = register(VettingWork())


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
