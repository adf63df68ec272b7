"""Gold validation (docs/methods.md §6, docs/adversarial.md): pooled work, three labels (good
or not good) per adversarial text of a study's plan.

A study asks for it as soon as its plan holds adversarial texts (the perturbations of kind
"Adversarial R+" / "Adversarial R-" that an adversarial search of the study made). Annotators
see the task, the source, the evaluation criterion the search used and the text; not the
judges' scores, nor which way the search went.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from apps.annotation.kinds import register
from apps.annotation.models import (
    GOLD_CHECK_OVERLAP,
    GoldCheck,
    GoldCheckSkip,
    GoldCheckSlot,
    Study,
    StudyPerturbation,
)
from apps.annotation.selectors.handed import GOLD_CHECK_PAGE, GOLD_CHECK_SHOWN
from apps.annotation.selectors.work import gold_check_item
from apps.annotation.services.leases import PooledWork
from apps.annotation.services.work import PlanPart, Saved, Setup, Unit
from apps.answer_sql import UnitLock
from apps.catalog.models import KindFamily

_NOT_ADVERSARIAL = "This text is not one of the study's adversarial texts."


def adversarial_plan(study: Study) -> Any:
    """The study's plan rows of adversarial texts."""
    return StudyPerturbation.objects.filter(
        study=study, perturbation__kind__family=KindFamily.ADVERSARIAL
    )


class GoldCheckSetup(Setup):
    def opted_in(self, study: Study) -> bool:
        return adversarial_plan(study).exists()

    def plan(self, work: Any, *, study: Study) -> PlanPart:
        units = adversarial_plan(study)
        return PlanPart(work.slots_sync(study=study, units=units, key="perturbation_id"))


class GoldCheckWork(PooledWork):
    slug, name, action = "gold_check", "Gold validation", "Check adversarial texts"
    position = 5
    model = GoldCheck
    slot_model = GoldCheckSlot
    skip_model = GoldCheckSkip
    answer_keys = ("good",)
    answer_noun = "label"
    answers_figure = ("gold_checks", "Gold labels", "gold-check-count")
    setup = GoldCheckSetup()
    api_item, page_item = GOLD_CHECK_SHOWN, GOLD_CHECK_PAGE
    # Labels of one text queue on its plan row, which must be an adversarial text's.
    lock = UnitLock(
        StudyPerturbation,
        by=("perturbation_id",),
        refusal=_NOT_ADVERSARIAL,
        where=(("perturbation__kind__family", KindFamily.ADVERSARIAL),),
    )

    def overlap(self, study: Study) -> int:
        return GOLD_CHECK_OVERLAP

    def item(self, *, study: Study, person, unit: Unit, held: bool | None = None) -> Any:
        return gold_check_item(study=study, annotator=person, **unit, held=held)

    def checked(self, *, study: Study, unit: Unit, answer: Mapping[str, Any]) -> Unit:
        if not isinstance(answer["good"], bool):
            raise ValueError("the label is good (true) or not good (false)")
        return unit

    def values(self, *, study, person, unit, answer, earlier, slot, held=None) -> dict[str, Any]:
        return {"good": answer["good"]}

    def label(self, judgement: Any) -> str:
        return "good" if judgement.good else "not good"


GOLD_CHECK = register(GoldCheckWork())


def gold_check_submit(
    *,
    study: Study,
    annotator,
    perturbation_id: int,
    good: bool,
    idempotency_key: uuid.UUID,
    based_on: int | None = None,
) -> Saved[GoldCheck]:
    """Save (or change) this annotator's label once per key (see `Work.submit`)."""
    return GOLD_CHECK.submit(
        study=study,
        person=annotator,
        unit={"perturbation_id": perturbation_id},
        answer={"good": good},
        idempotency_key=idempotency_key,
        based_on=based_on,
    )
