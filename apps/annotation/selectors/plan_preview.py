"""What a new study's plan will hold, counted from its unsaved choices (the new-study steps
show it before anything is saved).

The rules are the plan's (services/plan.py and each kind's `Setup.plan`), as counts:

* the plan's perturbations: those of the chosen kinds on the items of the chosen datasets;
* vetting: `vetting_overlap` slots per perturbation;
* comparison: one slot per comparable perturbation x criterion x group, when the criteria
  design can be met (`design.criteria_plan`, run here on stand-in annotators). A new study has
  no vettings, so when comparisons need vetting none is comparable yet: `comparisons` counts
  them once every perturbation may be compared, `comparisons_now` what the plan makes at once;
* direct assessment: one unit per rated text (originals, perturbed texts or both) x
  assessment criterion, `assessment_overlap` slots each;
* gold validation: `GOLD_CHECK_OVERLAP` slots per adversarial perturbation;
* a kind of work with its own settings counts its own (`Work.preview`, a `KindPreview` row).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from apps.annotation.design import CriterionSpec, PlanError, criteria_plan
from apps.annotation.models import GOLD_CHECK_OVERLAP, AssessedTexts
from apps.catalog.models import Criterion, KindFamily
from apps.corpus.models import Perturbation, SourceItem


@dataclass(frozen=True)
class PlanPreview:
    perturbations: int
    #: Of them, in datasets whose publisher validated their perturbations.
    validated: int
    adversarial: int
    vetting_overlap: int
    criteria: int
    groups: int
    comparisons_need_vetting: bool
    texts: int
    assessment_criteria: int
    assessment_overlap: int
    annotators: int
    #: Why comparisons cannot be handed out yet (the criteria design cannot be met), if so.
    problem: str
    #: The most criteria one annotator compares under (0 without a design).
    most_criteria: int
    #: What kinds of work with their own settings add (`Work.preview`).
    kinds: tuple[KindPreview, ...] = ()

    @property
    def vettings(self) -> int:
        return self.perturbations * self.vetting_overlap

    @property
    def comparisons(self) -> int:
        """Once every perturbation may be compared (vetted valid, when that is required)."""
        return self.perturbations * self.criteria * self.groups

    @property
    def comparisons_now(self) -> int:
        blocked = self.comparisons_need_vetting or self.problem
        return 0 if blocked else self.comparisons

    @property
    def ratings_per_text(self) -> int:
        return self.assessment_criteria * self.assessment_overlap

    @property
    def ratings(self) -> int:
        return self.texts * self.ratings_per_text

    @property
    def gold_checks(self) -> int:
        return self.adversarial * GOLD_CHECK_OVERLAP

    @property
    def slots(self) -> dict[str, int]:
        """What building the plan makes at once, as `PlanSummary.slots` (services/plan.py)."""
        return {
            "vetting": self.vettings,
            "comparison": self.comparisons_now,
            "assessment": self.ratings,
            "gold_check": self.gold_checks,
            **{kind.slug: kind.count for kind in self.kinds},
        }

    @property
    def per_annotator(self) -> dict[str, int]:
        """About how much each annotator does (pooled work shared evenly; comparisons: the
        largest share of the design), once every perturbation may be compared."""
        n = self.annotators
        if not n:
            return {}
        return {
            "vettings": min(self.perturbations, math.ceil(self.vettings / n)),
            "comparisons": self.most_criteria * self.perturbations,
            "ratings": min(self.texts * self.assessment_criteria, math.ceil(self.ratings / n)),
        }


@dataclass(frozen=True)
class KindPreview:
    """A row of the preview for a kind of work with its own settings: `count` answers (`label`,
    the row's name; `slug` its plan key), `detail` how they come about."""

    slug: str
    label: str
    count: int
    detail: str


def planned_ids(objects: Iterable[Any] | None) -> list[int]:
    """Chosen objects (or ids) as ids."""
    return [int(getattr(obj, "pk", obj)) for obj in objects or ()]


def planned_perturbations(datasets: Iterable[Any] | None, kinds: Iterable[Any] | None) -> Any:
    """The plan's perturbations: those of the chosen kinds on the items of the chosen datasets."""
    return Perturbation.objects.filter(
        item__dataset__in=planned_ids(datasets), kind__in=planned_ids(kinds)
    )


def plan_preview(
    *,
    datasets: Iterable[Any] = (),
    kinds: Iterable[Any] = (),
    criteria: Iterable[Any] = (),
    assessment_criteria: Iterable[Any] = (),
    vetting_overlap: int = 1,
    comparison_groups: int = 1,
    comparisons_need_vetting: bool = True,
    assessment_overlap: int = 1,
    assessment_texts: str = AssessedTexts.BOTH,
    annotators: int = 0,
    **_: Any,
) -> PlanPreview:
    """The counts of a plan for these choices (objects or ids; other set-up fields are
    ignored), with `annotators` annotators. Nothing is saved."""
    dataset_ids = planned_ids(datasets)
    plan = planned_perturbations(datasets, kinds)
    perturbations = plan.count()
    texts = 0
    if assessment_texts in (AssessedTexts.BOTH, AssessedTexts.ORIGINALS):
        texts += SourceItem.objects.filter(dataset__in=dataset_ids).count()
    if assessment_texts in (AssessedTexts.BOTH, AssessedTexts.PERTURBED):
        texts += perturbations
    problem, most = _design(planned_ids(criteria), comparison_groups, annotators)
    return PlanPreview(
        perturbations=perturbations,
        validated=plan.filter(item__dataset__publisher_validated=True).count(),
        adversarial=plan.filter(kind__family=KindFamily.ADVERSARIAL).count(),
        vetting_overlap=vetting_overlap,
        criteria=len(set(planned_ids(criteria))),
        groups=comparison_groups,
        comparisons_need_vetting=comparisons_need_vetting,
        texts=texts,
        assessment_criteria=len(set(planned_ids(assessment_criteria))),
        assessment_overlap=assessment_overlap,
        annotators=annotators,
        problem=problem,
        most_criteria=most,
    )


def _design(criterion_ids: list[int], groups: int, annotators: int) -> tuple[str, int]:
    """Whether the criteria design can be met (why not, if not) and the largest share."""
    if not criterion_ids:
        return "", 0
    if annotators < groups:
        noun = "annotator" if groups == 1 else "annotators"
        return f"Comparisons wait for at least {groups} {noun} (now {annotators}).", 0
    specs = [
        CriterionSpec(id=cid, aspect=aspect, description_type=dtype)
        for cid, aspect, dtype in Criterion.objects.filter(pk__in=criterion_ids)
        .order_by("id")
        .values_list("id", "aspect_id", "description_type")
    ]
    try:
        shares = criteria_plan(annotators=range(annotators), groups=groups, criteria=specs)
    except PlanError as exc:
        return str(exc), 0
    return "", max(len(share.criteria) for share in shares)
