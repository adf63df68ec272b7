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

from apps import sql_rows as rows
from apps.annotation.kinds import register
from apps.annotation.models import (
    GOLD_CHECK_OVERLAP,
    GoldCheck,
    GoldCheckSkip,
    GoldCheckSlot,
    Study,
    StudyPerturbation,
)
from apps.annotation.selectors.shown import gold_check_item_sql, gold_check_shown_sql
from apps.annotation.selectors.work import gold_check_item, gold_check_page_item
from apps.annotation.services.errors import WorkRefused
from apps.annotation.services.leases import PooledWork
from apps.annotation.services.work import PlanPart, Saved, Unit
from apps.catalog.models import KindFamily, PerturbationKind
from apps.corpus.models import Perturbation

_NOT_ADVERSARIAL = "This text is not one of the study's adversarial texts."
# The plan row of an adversarial text, locked (saves of one text queue on it): taken by the
# save's first statement (`lock_sql`).
_LOCK = (
    f"SELECT {rows.columns(StudyPerturbation, 'sp').sql} FROM {rows.table(StudyPerturbation)} sp "
    f"JOIN {rows.table(Perturbation)} p ON p.id = sp.perturbation_id "
    f"JOIN {rows.table(PerturbationKind)} k ON k.id = p.kind_id "
    "WHERE sp.study_id = %s AND sp.perturbation_id = %s AND k.family = %s FOR UPDATE OF sp"
)


def adversarial_plan(study: Study) -> Any:
    """The study's plan rows of adversarial texts."""
    return StudyPerturbation.objects.filter(
        study=study, perturbation__kind__family=KindFamily.ADVERSARIAL
    )


class GoldCheckWork(PooledWork):
    slug, name, action = "gold_check", "Gold validation", "Check adversarial texts"
    position = 5
    model = GoldCheck
    slot_model = GoldCheckSlot
    skip_model = GoldCheckSkip
    answer_keys = ("good",)
    answer_noun = "label"
    answers_figure = ("gold_checks", "Gold labels", "gold-check-count")

    def opted_in(self, study: Study) -> bool:
        return adversarial_plan(study).exists()

    def overlap(self, study: Study) -> int:
        return GOLD_CHECK_OVERLAP

    def plan(self, *, study: Study) -> PlanPart:
        units = adversarial_plan(study)
        return PlanPart(self.slots_sync(study=study, units=units, key="perturbation_id"))

    def shown_sql(self) -> tuple[str, str]:
        return gold_check_shown_sql()

    def item(self, *, study: Study, person, unit: Unit, held: bool | None = None) -> Any:
        return gold_check_item(study=study, annotator=person, **unit, held=held)

    def page_sql(self) -> str:
        return gold_check_item_sql()

    def page_item(self, *, study: Study, person, row: Any) -> Any:
        return gold_check_page_item(study, person, row, held=True)

    def checked(self, *, study: Study, unit: Unit, answer: Mapping[str, Any]) -> Unit:
        if not isinstance(answer["good"], bool):
            raise ValueError("the label is good (true) or not good (false)")
        return unit

    def lock_sql(self, *, study: Study, unit: Unit, person: Any) -> tuple[str, list[Any]]:
        return _LOCK, [study.pk, unit["perturbation_id"], KindFamily.ADVERSARIAL]

    def locked(self, row: tuple[Any, ...] | None) -> StudyPerturbation:
        if row is None:
            raise WorkRefused(_NOT_ADVERSARIAL)
        return rows.columns(StudyPerturbation, "sp").load(row)

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
