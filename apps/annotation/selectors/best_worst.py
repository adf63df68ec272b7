"""What the best-worst page shows: one tuple of an item's texts under one criterion, with the
person's best and worst if they answered it (SPEC §10; docs/annotation.md, "Best-worst
scaling"). Read by the ORM: a tuple is a few texts, and this work is not on the hot path that
the plain SQL of selectors/shown.py serves."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from django.http import Http404

from apps.annotation.kinds import AnnotatorProgress, annotator_progress
from apps.annotation.models import Study, judgement_version
from apps.annotation.models.best_worst import BestWorst, BestWorstSlot, BestWorstTuple
from apps.annotation.selectors.work import text_name
from apps.corpus.models import Perturbation

NOT_YOURS = "This tuple is not assigned to you."


@dataclass
class BestWorstItem:
    unit: BestWorstTuple
    texts: list[str]  # in the order shown
    text_name: str
    criterion_text: str
    answer: BestWorst | None
    held: bool
    previous: BestWorst | None
    progress: AnnotatorProgress
    based_on: int = 0  # the answer's version shown (see judgement_version)
    idempotency_key: uuid.UUID = field(default_factory=uuid.uuid4)

    @property
    def choices(self) -> list[tuple[int, str, str]]:
        """(place, key, text) of each text: keys 1 to the tuple's size."""
        return [(place, str(place + 1), text) for place, text in enumerate(self.texts)]


def best_worst_item(
    *, study: Study, annotator, unit_id: int, held: bool | None = None
) -> BestWorstItem:
    """One tuple as this annotator answers it; 404 unless they hold it or answered it.
    Which text is the original is not shown, nor how the others were made."""
    unit = (
        BestWorstTuple.objects.select_related(
            "item__task", "item__dataset__task", "criterion__aspect"
        )
        .filter(study=study, pk=unit_id)
        .first()
    )
    if unit is None:
        raise Http404(NOT_YOURS)
    mine = BestWorst.answers.filter(study=study, annotator=annotator)
    answer = mine.filter(unit=unit).first()
    holds = BestWorstSlot.objects.filter(
        study=study, annotator=annotator, unit=unit, done_at__isnull=True
    ).exists()
    held = bool(held or holds)
    if not held and answer is None:
        raise Http404(NOT_YOURS)
    perturbed = Perturbation.objects.in_bulk([t for t in unit.texts if t is not None])
    name = text_name(unit.item)
    earlier = mine.filter(created_at__lt=answer.created_at) if answer is not None else mine
    progress = annotator_progress(study, annotator)
    progress.counted("best_worst", done=mine.count())
    return BestWorstItem(
        unit=unit,
        texts=[_text(unit, perturbed, t) for t in unit.texts],
        text_name=name,
        criterion_text=unit.criterion.render(name),
        answer=answer,
        held=held,
        previous=earlier.order_by("-created_at", "-id").first(),
        progress=progress,
        based_on=judgement_version(answer),
    )


def _text(unit: BestWorstTuple, perturbed: dict[int, Perturbation], text: int | None) -> str:
    if text is None:
        return unit.item.original
    found = perturbed.get(text)
    return found.text if found is not None else "(This text has been deleted.)"
