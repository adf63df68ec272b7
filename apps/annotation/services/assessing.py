"""Direct assessment (docs/annotation.md): pooled work, k ratings per text x criterion.

A study opts in by choosing criteria (`Study.assessment_criteria`); the plan makes one unit per
text (the originals of its datasets' items, its perturbed texts, or both) and criterion, in a
seeded shuffle, and k leased slots per unit. A rating is an integer on the criterion's scale.
"""

from __future__ import annotations

import random
from typing import Any

from django.db.models import Exists, Max, OuterRef

from apps.annotation.kinds import register
from apps.annotation.models import (
    AssessedTexts,
    Assessment,
    AssessmentSkip,
    AssessmentSlot,
    AssessmentUnit,
    ControlItem,
    Study,
    StudyPerturbation,
)
from apps.annotation.models.assessment import rated
from apps.annotation.selectors.handed import ASSESSMENT_PAGE, ASSESSMENT_SHOWN
from apps.annotation.selectors.work import assessment_item
from apps.annotation.services.leases import BATCH, PooledWork
from apps.annotation.services.work import PlanPart, Setup, Unit
from apps.answer_sql import UnitRead
from apps.catalog.models import Criterion
from apps.corpus.models import SourceItem

Text = tuple[int, int | None]  # (item, perturbation or None for the original)


class AssessmentSetup(Setup):
    def opted_in(self, study: Study) -> bool:
        return rated(study).assessment_criteria.exists()

    def demo(self, study: Study) -> None:
        rated(study).assessment_criteria.set(
            Criterion.objects.filter(
                key__in=("discern-coherence-default", "discern-fluency-default")
            )
        )

    def plan(self, work: Any, *, study: Study) -> PlanPart:
        _units_sync(study)
        units = AssessmentUnit.objects.filter(study=study, active=True)
        return PlanPart(work.slots_sync(study=study, units=units, key="id"))


class AssessmentWork(PooledWork):
    slug, name, action = "assessment", "Direct assessment", "Rate texts"
    position = 3
    model = Assessment
    slot_model = AssessmentSlot
    skip_model = AssessmentSkip
    answer_keys = ("score",)
    answer_noun = "rating"
    answers_figure = ("assessments", "Ratings", "assessment-count")
    recent_related = ("unit__criterion__aspect",)
    setup = AssessmentSetup()
    api_item, page_item = ASSESSMENT_SHOWN, ASSESSMENT_PAGE
    # The criterion's scale and what the answer shows of the unit, read by the save's first
    # statement.
    reads = UnitRead(
        AssessmentUnit,
        by=(("id", "unit_id"),),
        fields=(
            "criterion__scale_min",
            "criterion__scale_max",
            "item_id",
            "perturbation_id",
            "criterion_id",
            "criterion__key",
        ),
    )

    def overlap(self, study: Study) -> int:
        return rated(study).assessment_overlap

    def item(self, *, study: Study, person, unit: Unit, held: bool | None = None) -> Any:
        return assessment_item(study=study, annotator=person, **unit, held=held)

    def values(self, *, study, person, unit, answer, earlier, slot, held=None) -> dict[str, Any]:
        low, high = held[:2]  # read by the save (`reads`)
        score = answer["score"]
        if not low <= score <= high:
            raise ValueError(f"score {score} is outside this criterion's scale, {low} to {high}")
        return {"score": score, "scale_min": low, "scale_max": high}

    def after_save(self, *, study: Study, judgement: Any, held: Any, counted: Any = None) -> None:
        if held is not None:  # the unit as the answer shows it (its criterion's key)
            _, _, item, perturbation, criterion, key = held
            judgement.unit = AssessmentUnit.from_db(
                None,
                ["id", "study_id", "item_id", "perturbation_id", "criterion_id"],
                [judgement.unit_id, study.pk, item, perturbation, criterion],
            )
            judgement.unit.criterion = Criterion.from_db(None, ["id", "key"], [criterion, key])

    def label(self, judgement: Any) -> str:
        return f"{judgement.score} (on {judgement.scale_min}-{judgement.scale_max})"


ASSESSMENT = register(AssessmentWork())


def _units_sync(study: Study) -> None:
    """One unit per wanted text x criterion; units no longer wanted lose their open slots
    and go, unless rated or a control item (then they stay, inactive)."""
    criteria = list(rated(study).assessment_criteria.values_list("id", flat=True))
    wanted = {(item, pert, c) for item, pert in _texts(study) for c in criteria}
    units = AssessmentUnit.objects.filter(study=study)
    have = {
        (item, pert, c): (pk, active)
        for pk, item, pert, c, active in units.values_list(
            "pk", "item_id", "perturbation_id", "criterion_id", "active"
        )
    }
    gone = [pk for key, (pk, _) in have.items() if key not in wanted]
    AssessmentSlot.objects.filter(unit_id__in=gone, done_at__isnull=True).delete()
    answered = Exists(Assessment.answers.filter(unit=OuterRef("pk")))
    controlled = Exists(ControlItem.objects.filter(unit=OuterRef("pk")))
    units.filter(pk__in=gone).exclude(answered).exclude(controlled).delete()
    units.filter(pk__in=gone).update(active=False)
    back = [pk for key, (pk, active) in have.items() if key in wanted and not active]
    units.filter(pk__in=back).update(active=True)
    new = sorted(wanted - set(have), key=lambda key: (key[0], key[1] or 0, key[2]))
    start = (units.aggregate(top=Max("position"))["top"] or 0) + 1
    random.Random(f"{study.pk}:assessment:{start}").shuffle(new)
    AssessmentUnit.objects.bulk_create(
        (
            AssessmentUnit(
                study=study, item_id=item, perturbation_id=pert, criterion_id=c, position=start + i
            )
            for i, (item, pert, c) in enumerate(new)
        ),
        batch_size=BATCH,
    )


def _texts(study: Study) -> list[Text]:
    """The texts the study rates: its items' originals and/or its plan's perturbed texts."""
    texts: list[Text] = []
    if rated(study).assessment_texts in (AssessedTexts.BOTH, AssessedTexts.ORIGINALS):
        items = SourceItem.objects.filter(dataset__in=study.datasets.all())
        texts += [(pk, None) for pk in items.values_list("pk", flat=True)]
    if rated(study).assessment_texts in (AssessedTexts.BOTH, AssessedTexts.PERTURBED):
        plan = StudyPerturbation.objects.filter(study=study)
        texts += list(plan.values_list("perturbation__item_id", "perturbation_id"))
    return texts
