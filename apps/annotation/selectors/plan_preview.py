"""What a new study's plan will hold, counted from its unsaved choices (the new-study steps
show it before anything is saved).

The rules are the plan's (services/plan.py and each `Work.plan`), as counts:

* the plan's perturbations: those of the chosen kinds on the items of the chosen datasets;
* vetting: `vetting_overlap` slots per perturbation;
* comparison: one slot per comparable perturbation x criterion x group, when the criteria
  design can be met (`design.criteria_plan`, run here on stand-in annotators). A new study has
  no vettings, so when comparisons need vetting none is comparable yet: `comparisons` counts
  them once every perturbation may be compared, `comparisons_now` what the plan makes at once;
* direct assessment: one unit per rated text (originals, perturbed texts or both) x
  assessment criterion, `assessment_overlap` slots each;
* best-worst scaling: per item with N >= 3 texts (its original and its perturbations), the
  standard design's tuples (`bws_design_size`; one tuple when N is at most the tuple's size)
  x best-worst criterion, `best_worst_overlap` slots each;
* gold validation: `GOLD_CHECK_OVERLAP` slots per adversarial perturbation.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db.models import Count

from apps.annotation.bws_design import bws_design_size
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
    #: Best-worst tuples of one criterion (over every item), criteria, and answers per tuple.
    tuples: int
    best_worst_criteria: int
    best_worst_overlap: int
    #: Why comparisons cannot be handed out yet (the criteria design cannot be met), if so.
    problem: str
    #: The most criteria one annotator compares under (0 without a design).
    most_criteria: int

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
    def best_worst_answers(self) -> int:
        return self.tuples * self.best_worst_criteria * self.best_worst_overlap

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
            "best_worst": self.best_worst_answers,
            "gold_check": self.gold_checks,
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


def _ids(objects: Iterable[Any] | None) -> list[int]:
    return [int(getattr(obj, "pk", obj)) for obj in objects or ()]


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
    best_worst_criteria: Iterable[Any] = (),
    best_worst_size: int = 4,
    best_worst_overlap: int = 2,
    annotators: int = 0,
    **_: Any,
) -> PlanPreview:
    """The counts of a plan for these choices (objects or ids; other set-up fields are
    ignored), with `annotators` annotators. Nothing is saved."""
    dataset_ids, kind_ids = _ids(datasets), _ids(kinds)
    plan = Perturbation.objects.filter(item__dataset__in=dataset_ids, kind__in=kind_ids)
    perturbations = plan.count()
    texts = 0
    if assessment_texts in (AssessedTexts.BOTH, AssessedTexts.ORIGINALS):
        texts += SourceItem.objects.filter(dataset__in=dataset_ids).count()
    if assessment_texts in (AssessedTexts.BOTH, AssessedTexts.PERTURBED):
        texts += perturbations
    problem, most = _design(_ids(criteria), comparison_groups, annotators)
    return PlanPreview(
        perturbations=perturbations,
        validated=plan.filter(item__dataset__publisher_validated=True).count(),
        adversarial=plan.filter(kind__family=KindFamily.ADVERSARIAL).count(),
        vetting_overlap=vetting_overlap,
        criteria=len(set(_ids(criteria))),
        groups=comparison_groups,
        comparisons_need_vetting=comparisons_need_vetting,
        texts=texts,
        assessment_criteria=len(set(_ids(assessment_criteria))),
        assessment_overlap=assessment_overlap,
        annotators=annotators,
        tuples=_tuples(plan, best_worst_size) if best_worst_criteria else 0,
        best_worst_criteria=len(set(_ids(best_worst_criteria))),
        best_worst_overlap=best_worst_overlap,
        problem=problem,
        most_criteria=most,
    )


def _tuples(plan: Any, size: int) -> int:
    """The best-worst tuples of one criterion: each item's original and its perturbations."""
    tuples = 0
    for n in plan.values("item_id").annotate(n=Count("id")).values_list("n", flat=True):
        texts = n + 1
        if texts >= 3:
            tuples += 1 if texts <= size else bws_design_size(texts, size=size).tuples
    return tuples


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
