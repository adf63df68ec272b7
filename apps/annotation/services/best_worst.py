"""Best-worst scaling (SPEC §10; docs/annotation.md, "Best-worst scaling"): pooled work, r
answers per tuple of an item's texts x criterion.

A study opts in by choosing criteria (`Study.best_worst_criteria`). The texts of an item are
its original and the study's perturbed texts of it; an item with N >= 3 texts gets the
standard design over them (models/best_worst.py, `bws_tuples`: about 2N tuples of
`best_worst_size`, each text in the same number of tuples; an item with no more texts than a
tuple holds gets one tuple of them all), seeded by the study, item and criterion so a rebuilt
plan makes the same tuples. When an item's texts change, its unanswered tuples go and a new
design is made; answered ones stay, inactive. An answer is two places in the tuple.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from django.db.models import Count, Exists, Max, OuterRef
from django.template.defaultfilters import pluralize

from apps.annotation.kinds import register
from apps.annotation.models import Study, StudyPerturbation
from apps.annotation.models.best_worst import (
    DEFAULT_OVERLAP,
    DEFAULT_SIZE,
    BestWorst,
    BestWorstSkip,
    BestWorstSlot,
    BestWorstTuple,
    bws_design_size,
    bws_tuples,
    scaled,
)
from apps.annotation.selectors.best_worst import NOT_YOURS, best_worst_item
from apps.annotation.selectors.plan_preview import KindPreview, planned_ids, planned_perturbations
from apps.annotation.services.errors import WorkRefused
from apps.annotation.services.leases import BATCH, PooledWork
from apps.annotation.services.work import PlanPart, Setup, Unit
from apps.catalog.models import Criterion

#: An item needs this many texts for best and worst to say something (a pair is a comparison).
FEWEST_TEXTS = 3
Group = tuple[int, int]  # (item, criterion)


class BestWorstSetup(Setup):
    def opted_in(self, study: Study) -> bool:
        return scaled(study).best_worst_criteria.exists()

    def preview(self, choices: Mapping[str, Any]) -> KindPreview | None:
        """Per item with N >= 3 texts (its original and its perturbations), the standard
        design's tuples (one when N is at most the tuple's size) x criterion x overlap."""
        criteria = len(set(planned_ids(choices.get("best_worst_criteria"))))
        if not criteria:
            return None
        size = choices.get("best_worst_size") or DEFAULT_SIZE
        overlap = choices.get("best_worst_overlap") or DEFAULT_OVERLAP
        plan = planned_perturbations(choices.get("datasets"), choices.get("kinds"))
        tuples = 0
        for n in plan.values("item_id").annotate(n=Count("id")).values_list("n", flat=True):
            if n + 1 >= FEWEST_TEXTS:
                tuples += 1 if n + 1 <= size else bws_design_size(n + 1, size=size).tuples
        detail = (
            f"{tuples:,} tuple{pluralize(tuples)} × {criteria} "
            f"criteri{pluralize(criteria, 'on,a')} × {overlap} per tuple"
        )
        if not tuples:
            detail += " (no item has 3 texts: its original and 2 perturbations)"
        return KindPreview("best_worst", "Best-worst answers", tuples * criteria * overlap, detail)

    def demo(self, study: Study) -> None:
        scaled(study).best_worst_criteria.set(
            Criterion.objects.filter(key="discern-coherence-default")
        )

    def plan(self, work: Any, *, study: Study) -> PlanPart:
        _tuples_sync(study)
        units = BestWorstTuple.objects.filter(study=study, active=True)
        return PlanPart(work.slots_sync(study=study, units=units, key="id"))


class BestWorstWork(PooledWork):
    slug, name, action = "best_worst", "Best-worst scaling", "Pick best and worst"
    position = 4
    model = BestWorst
    slot_model = BestWorstSlot
    skip_model = BestWorstSkip
    answer_keys = ("best", "worst")
    answer_noun = "choice"
    answers_figure = ("best_worsts", "Best-worst answers", "best-worst-count")
    recent_related = ("unit__criterion__aspect",)
    setup = BestWorstSetup()
    agreement = False  # compared by split-half reliability, not alpha

    def overlap(self, study: Study) -> int:
        return scaled(study).best_worst_overlap

    def item(self, *, study: Study, person, unit: Unit, held: bool | None = None) -> Any:
        return best_worst_item(study=study, annotator=person, **unit, held=held)

    def checked(self, *, study: Study, unit: Unit, answer: Mapping[str, Any]) -> Unit:
        best, worst = answer["best"], answer["worst"]
        if not all(isinstance(place, int) and place >= 0 for place in (best, worst)):
            raise ValueError("best and worst are places in the tuple: 0 for its first text")
        if best == worst:
            raise ValueError("the best and the worst must be different texts")
        return unit

    def values(self, *, study, person, unit, answer, earlier, slot, held=None) -> dict[str, Any]:
        texts = (
            BestWorstTuple.objects.filter(study=study, pk=unit["unit_id"])
            .values_list("texts", flat=True)
            .first()
        )
        if texts is None:
            raise WorkRefused(NOT_YOURS)
        for role in ("best", "worst"):
            if answer[role] >= len(texts):
                raise ValueError(
                    f"{role} {answer[role]} is not a place in this tuple of {len(texts)} texts "
                    f"(0 to {len(texts) - 1})"
                )
        return {"best": answer["best"], "worst": answer["worst"]}

    def label(self, judgement: Any) -> str:
        return f"best text {judgement.best + 1}, worst text {judgement.worst + 1}"


BEST_WORST = register(BestWorstWork())


def _tuples_sync(study: Study) -> None:
    """The tuples of every wanted item x criterion (see the module docstring)."""
    criteria = list(scaled(study).best_worst_criteria.values_list("id", flat=True))
    texts = _texts(study)
    wanted = {
        (item, c): shown
        for item, shown in texts.items()
        if len(shown) >= FEWEST_TEXTS
        for c in criteria
    }
    tuples = BestWorstTuple.objects.filter(study=study)
    active: dict[Group, set[Any]] = defaultdict(set)
    numbers: dict[Group, int] = defaultdict(int)
    ids: dict[Group, list[int]] = defaultdict(list)
    for pk, item, c, number, shown, on in tuples.values_list(
        "pk", "item_id", "criterion_id", "number", "texts", "active"
    ):
        numbers[(item, c)] = max(numbers[(item, c)], number)
        if on:
            active[(item, c)].update(shown)
            ids[(item, c)].append(pk)
    kept = {group for group, shown in active.items() if set(wanted.get(group, ())) == shown}
    _retire(tuples, [pk for group, pks in ids.items() if group not in kept for pk in pks])
    new = [
        (item, c, numbers[(item, c)] + 1 + n, list(shown))
        for (item, c), group_texts in sorted(wanted.items())
        if (item, c) not in kept
        for n, shown in enumerate(_design(group_texts, study, item, c))
    ]
    start = (tuples.aggregate(top=Max("position"))["top"] or 0) + 1
    random.Random(f"{study.pk}:best_worst:{start}").shuffle(new)
    BestWorstTuple.objects.bulk_create(
        (
            BestWorstTuple(
                study=study,
                item_id=item,
                criterion_id=c,
                number=number,
                texts=shown,
                position=start + i,
            )
            for i, (item, c, number, shown) in enumerate(new)
        ),
        batch_size=BATCH,
    )


def _retire(tuples: Any, pks: list[int]) -> None:
    """Tuples no longer wanted lose their open slots and go, unless answered (then they stay,
    inactive)."""
    BestWorstSlot.objects.filter(unit_id__in=pks, done_at__isnull=True).delete()
    answered = Exists(BestWorst.answers.filter(unit=OuterRef("pk")))
    tuples.filter(pk__in=pks).exclude(answered).delete()
    tuples.filter(pk__in=pks).update(active=False)


def _design(texts: list[Any], study: Study, item: int, criterion: int) -> list[tuple[Any, ...]]:
    """The tuples of one item's texts: the standard design, or one tuple of them all."""
    seed = random.Random(f"{study.pk}:{item}:{criterion}").getrandbits(32)
    size = scaled(study).best_worst_size
    if len(texts) <= size:
        shown = list(texts)
        random.Random(seed).shuffle(shown)
        return [tuple(shown)]
    return bws_tuples(texts, size=size, seed=seed)


def _texts(study: Study) -> dict[int, list[int | None]]:
    """Each item's texts in the study: its original (None) and its perturbed texts in the plan,
    for every item of the study's datasets."""
    texts: dict[int, list[int | None]] = {}
    for item in study.datasets.values_list("items__id", flat=True):
        if item is not None:
            texts[item] = [None]
    plan = StudyPerturbation.objects.filter(study=study).order_by("perturbation_id")
    for item, perturbation in plan.values_list("perturbation__item_id", "perturbation_id"):
        texts.setdefault(item, [None]).append(perturbation)
    return texts
