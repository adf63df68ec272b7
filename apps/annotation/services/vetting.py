"""Vetting (methods §3): pooled work, k verdicts per perturbation; and editing a perturbed text.

A verdict changes the perturbation's consensus, and with it whether the perturbation may be
compared (services/plan.py): that happens in the same transaction as the save.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db import transaction

from apps import sql_rows as rows
from apps.annotation.kinds import register
from apps.annotation.models import (
    Study,
    StudyPerturbation,
    Verdict,
    Vetting,
    VettingSkip,
    VettingSlot,
)
from apps.annotation.selectors.work import (
    vetting_item,
    vetting_page_item,
    vetting_page_sql,
    vetting_shown_sql,
)
from apps.annotation.services.errors import WorkRefused
from apps.annotation.services.leases import PooledWork
from apps.annotation.services.plan import comparable_refresh_one
from apps.annotation.services.work import PlanPart, Unit
from apps.corpus.models import Perturbation, PerturbationVersion

# The plan row, locked, with the annotator's latest edit of the text (see `values`): taken
# by the save's first statement (`lock_sql`).
_LOCK = (
    f"SELECT {rows.columns(StudyPerturbation, 'sp').sql}, (SELECT v.id FROM "
    f"{rows.table(PerturbationVersion)} v WHERE v.perturbation_id = sp.perturbation_id "
    "AND v.author_id = %s ORDER BY v.number DESC LIMIT 1) "
    f"FROM {rows.table(StudyPerturbation)} sp "
    "WHERE sp.study_id = %s AND sp.perturbation_id = %s FOR UPDATE OF sp"
)
_NOT_IN_STUDY = "This perturbation is not part of the study."


_COUNTED = (
    f"(SELECT COALESCE({rows.json_object_agg('c.verdict', 'c.n')}, '{{}}') FROM "
    "(SELECT verdict, count(*) AS n FROM "
    f"{rows.table(Vetting)} WHERE study_id = %s AND perturbation_id = %s "
    "AND control_id IS NULL GROUP BY verdict) c)"
)


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

    def overlap(self, study: Study) -> int:
        return study.vetting_overlap

    def plan(self, *, study: Study) -> PlanPart:
        units = StudyPerturbation.objects.filter(study=study)
        return PlanPart(self.slots_sync(study=study, units=units, key="perturbation_id"))

    def shown_sql(self) -> tuple[str, str]:
        select, tables = vetting_shown_sql()
        return select, f"{tables} WHERE p.id = got.perturbation_id"

    def item(self, *, study: Study, person, unit: Unit, held: bool | None = None) -> Any:
        return vetting_item(study=study, annotator=person, **unit, held=held)

    def page_sql(self) -> str:
        return vetting_page_sql()

    def page_item(self, *, study: Study, person, row: Any) -> Any:
        return vetting_page_item(study, person, row, held=True)

    def checked(self, *, study: Study, unit: Unit, answer: Mapping[str, Any]) -> Unit:
        if answer["verdict"] not in Verdict.values:
            raise ValueError(f"unknown verdict {answer['verdict']!r}")
        return unit

    # Vettings of one perturbation queue up on its plan row, so the consensus computed after
    # the save always counts every committed vetting.
    def lock_sql(self, *, study: Study, unit: Unit, person: Any) -> tuple[str, list[Any]]:
        return _LOCK, [person.pk, study.pk, unit["perturbation_id"]]

    def locked(self, row: tuple[Any, ...] | None) -> StudyPerturbation:
        if row is None:
            raise WorkRefused(_NOT_IN_STUDY)
        plan = rows.columns(StudyPerturbation, "sp").load(row)
        plan.edit_by_person = row[-1]
        return plan

    def values(self, *, study, person, unit, answer, earlier, slot, held=None) -> dict[str, Any]:
        # The vetting points at the annotator's own latest edit of the text, if they made one.
        if held is not None and hasattr(held, "edit_by_person"):  # read with the lock
            return {
                "verdict": answer["verdict"],
                "note": answer["note"],
                "edited_version_id": held.edit_by_person,
            }
        edit = (
            PerturbationVersion.objects.filter(perturbation_id=unit["perturbation_id"])
            .filter(author=person)
            .order_by("-number")
            .first()
        )
        return {"verdict": answer["verdict"], "note": answer["note"], "edited_version": edit}

    def counted_sql(self, *, study: Study, unit: Unit) -> tuple[str, list[Any]]:
        # The other verdicts on the perturbation (the plan row's lock makes them final).
        return _COUNTED, [study.pk, unit["perturbation_id"]]

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
