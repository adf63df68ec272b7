"""What the annotator's pages show: one vetting item (with its diff), one comparison, one
text to rate (direct assessment), or one adversarial text to label (gold validation)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from functools import cache

from django.http import Http404

from apps.annotation.models import (
    Assessment,
    AssessmentSlot,
    AssessmentUnit,
    Comparison,
    ComparisonSlot,
    ControlServe,
    GoldCheck,
    GoldCheckSlot,
    Study,
    Vetting,
    VettingSlot,
    judgement_version,
    original_shown_first,
)
from apps.annotation.selectors import rows
from apps.annotation.services.work import AnnotatorProgress, annotator_progress
from apps.catalog.models import Aspect, Criterion, PerturbationKind, Task
from apps.corpus.diff import compute_diff, render_inline_html, render_side_by_side
from apps.corpus.models import Dataset, Perturbation, PerturbationVersion, SourceItem

RECENT = 8


@dataclass
class DiffPanes:
    original_html: str
    perturbed_html: str
    inline_html: str


def diff_panes(ops) -> DiffPanes:
    left, right = render_side_by_side(ops)
    return DiffPanes(left, right, render_inline_html(ops))


def holds_control(*, study: Study, annotator, work: str, **unit: int) -> bool:
    """Whether the annotator was served this unit as a control item and has not answered or
    skipped it: then it is theirs, like a held slot (services/controls.py)."""
    if not study.control_every:
        return False
    lookup = {f"control__{name}": value for name, value in unit.items()}
    return (
        ControlServe.objects.filter(
            study=study, annotator=annotator, work=work, answered_at__isnull=True, skipped=False
        )
        .filter(**lookup)
        .exists()
    )


def diff_preview(original: str, text: str) -> DiffPanes:
    """The diff of an edit being typed (not saved)."""
    return diff_panes(compute_diff(original, text))


def text_name(item: SourceItem) -> str:
    """What the evaluated text is called for this item's task ("summary", "answer", ...)."""
    task = item.task or item.dataset.task
    return task.text_name if task else "text"


@dataclass
class VettingItem:
    perturbation: Perturbation
    panes: DiffPanes
    text_name: str
    vetting: Vetting | None
    version: int
    edited_by_me: bool
    held: bool
    previous: Vetting | None
    recent: list[Vetting]
    progress: AnnotatorProgress
    based_on: int = 0  # the verdict's version shown (see judgement_version)
    idempotency_key: uuid.UUID = field(default_factory=uuid.uuid4)


def vetting_item(*, study: Study, annotator, perturbation_id: int) -> VettingItem:
    """One perturbation as this annotator vets it; 404 unless they hold it or vetted it."""
    mine = {"study": study, "perturbation_id": perturbation_id, "annotator": annotator}
    held = VettingSlot.objects.filter(**mine, done_at__isnull=True).exists() or holds_control(
        study=study, annotator=annotator, work="vetting", perturbation_id=perturbation_id
    )
    vetting = Vetting.answers.filter(**mine).first()
    if not held and vetting is None:
        raise Http404("This item is not assigned to you.")
    perturbation = Perturbation.objects.select_related(
        "item__task", "item__dataset__task", "kind__target_aspect"
    ).get(pk=perturbation_id)
    latest = perturbation.versions.order_by("-number").values_list("number", "author_id").first()
    mine_all = Vetting.answers.filter(study=study, annotator=annotator)
    recent = list(
        mine_all.select_related("perturbation__kind")
        .only("perturbation_id", "verdict", "created_at", "perturbation__kind__name")
        .order_by("-created_at", "-id")[:RECENT]
    )
    return VettingItem(
        perturbation=perturbation,
        panes=diff_panes(perturbation.diff_ops()),
        text_name=text_name(perturbation.item),
        vetting=vetting,
        version=latest[0] if latest else 1,
        edited_by_me=bool(latest and latest[1] == annotator.pk),
        held=held,
        previous=_previous(mine_all, vetting) if vetting else (recent[0] if recent else None),
        recent=recent,
        progress=annotator_progress(study, annotator),
        based_on=judgement_version(vetting),
    )


def _previous(mine, current):
    """The judgement before `current` (or the latest one), for "back"."""
    if current is not None:
        mine = mine.filter(created_at__lt=current.created_at)
    return mine.order_by("-created_at", "-id").first()


@dataclass
class ComparisonItem:
    perturbation: Perturbation
    criterion: Criterion
    criterion_text: str
    text_name: str
    first_text: str
    second_text: str
    original_first: bool
    comparison: Comparison | None
    held: bool
    previous: Comparison | None
    recent: list[Comparison]
    progress: AnnotatorProgress
    idempotency_key: uuid.UUID = field(default_factory=uuid.uuid4)


def comparison_item(
    *, study: Study, annotator, perturbation_id: int, criterion_id: int
) -> ComparisonItem:
    """One pair x criterion as this annotator compares it; 404 unless it is theirs."""
    mine = {
        "study": study,
        "perturbation_id": perturbation_id,
        "criterion_id": criterion_id,
        "annotator": annotator,
    }
    held = ComparisonSlot.objects.filter(**mine, done_at__isnull=True).exists() or holds_control(
        study=study,
        annotator=annotator,
        work="comparison",
        perturbation_id=perturbation_id,
        criterion_id=criterion_id,
    )
    comparison = Comparison.answers.filter(**mine).first()
    if not held and comparison is None:
        raise Http404("This comparison is not assigned to you.")
    perturbation = Perturbation.objects.select_related("item__task", "item__dataset__task").get(
        pk=perturbation_id
    )
    criterion = Criterion.objects.select_related("aspect").get(pk=criterion_id)
    original_first = (
        comparison.original_first
        if comparison
        else original_shown_first(
            study_id=study.pk,
            perturbation_id=perturbation_id,
            criterion_id=criterion_id,
            user_id=annotator.pk,
        )
    )
    original, perturbed = perturbation.item.original, perturbation.text
    name = text_name(perturbation.item)
    mine_all = Comparison.answers.filter(study=study, annotator=annotator)
    recent = list(
        mine_all.select_related("criterion__aspect").order_by("-created_at", "-id")[:RECENT]
    )
    return ComparisonItem(
        perturbation=perturbation,
        criterion=criterion,
        criterion_text=criterion.render(name),
        text_name=name,
        first_text=original if original_first else perturbed,
        second_text=perturbed if original_first else original,
        original_first=original_first,
        comparison=comparison,
        held=held,
        previous=_previous(mine_all, comparison) if comparison else (recent[0] if recent else None),
        recent=recent,
        progress=annotator_progress(study, annotator),
    )


@dataclass
class VettingBrief:
    """A vetting item for the API: the perturbation with its stored diff, no HTML."""

    perturbation: Perturbation
    text_name: str
    version: int
    leased_until: object


@cache
def _brief_sql() -> str:
    p, i = rows.columns(Perturbation, "p"), rows.columns(SourceItem, "i")
    k, a = rows.columns(PerturbationKind, "k"), rows.columns(Aspect, "a")
    versions, tasks = rows.table(PerturbationVersion), rows.table(Task)
    return (
        f"SELECT {p.sql}, {i.sql}, {k.sql}, {a.sql}, "
        "COALESCE(t.text_name, dt.text_name, 'text'), "
        f"(SELECT v.number FROM {versions} v WHERE v.perturbation_id = p.id "
        "ORDER BY v.number DESC LIMIT 1) "
        f"FROM {rows.table(Perturbation)} p JOIN {rows.table(SourceItem)} i ON i.id = p.item_id "
        f"JOIN {rows.table(Dataset)} d ON d.id = i.dataset_id "
        f"LEFT JOIN {tasks} t ON t.id = i.task_id LEFT JOIN {tasks} dt ON dt.id = d.task_id "
        f"JOIN {rows.table(PerturbationKind)} k ON k.id = p.kind_id "
        f"LEFT JOIN {rows.table(Aspect)} a ON a.id = k.target_aspect_id WHERE p.id = %s"
    )


def vetting_brief(slot: VettingSlot | ControlServe) -> VettingBrief:
    """The API's vetting item: one statement written once (selectors/rows.py)."""
    if not rows.fast():
        return _vetting_brief_orm(slot)
    row = rows.fetch(_brief_sql(), [slot.perturbation_id])[0]
    at = 0
    loaded = []
    for model, alias in ((Perturbation, "p"), (SourceItem, "i"), (PerturbationKind, "k")):
        columns = rows.columns(model, alias)
        loaded.append(columns.load(row, at))
        at += columns.width
    perturbation, item, kind = loaded
    aspect = rows.columns(Aspect, "a")
    kind.target_aspect = aspect.load(row, at) if row[at] is not None else None
    perturbation.item, perturbation.kind = item, kind
    perturbation.diff_ops()  # computed once and stored
    text_name, version = row[-2], row[-1]
    return VettingBrief(perturbation, text_name, version or 1, slot.leased_until)


def _vetting_brief_orm(slot: VettingSlot | ControlServe) -> VettingBrief:
    perturbation = Perturbation.objects.select_related(
        "item__task", "item__dataset__task", "kind__target_aspect"
    ).get(pk=slot.perturbation_id)
    perturbation.diff_ops()  # computed once and stored
    version = perturbation.versions.order_by("-number").values_list("number", flat=True).first()
    return VettingBrief(perturbation, text_name(perturbation.item), version or 1, slot.leased_until)


@dataclass
class AssessmentItem:
    unit: AssessmentUnit
    text: str
    text_name: str
    criterion_text: str
    scale: list[int]  # every score the criterion allows, lowest first
    assessment: Assessment | None
    held: bool
    previous: Assessment | None
    recent: list[Assessment]
    progress: AnnotatorProgress
    based_on: int = 0  # the rating's version shown (see judgement_version)
    idempotency_key: uuid.UUID = field(default_factory=uuid.uuid4)

    @property
    def keyed(self) -> bool:
        """Each score has its digit key (scales within 0-9, or 1-10 with 0 for 10)."""
        return len(self.scale) <= 10 and self.scale[0] >= 0 and self.scale[-1] <= 10


def assessment_item(*, study: Study, annotator, unit_id: int) -> AssessmentItem:
    """One text x criterion as this annotator rates it; 404 unless they hold it or rated it.
    Whether the text is an original or a perturbed one is not shown."""
    mine = {"study": study, "unit_id": unit_id, "annotator": annotator}
    held = AssessmentSlot.objects.filter(**mine, done_at__isnull=True).exists()
    held = held or holds_control(
        study=study, annotator=annotator, work="assessment", unit_id=unit_id
    )
    assessment = Assessment.answers.filter(**mine).first()
    if not held and assessment is None:
        raise Http404("This text is not assigned to you.")
    unit = AssessmentUnit.objects.select_related(
        "item__task", "item__dataset__task", "perturbation", "criterion__aspect"
    ).get(pk=unit_id)
    name = text_name(unit.item)
    criterion = unit.criterion
    mine_all = Assessment.answers.filter(study=study, annotator=annotator)
    recent = list(
        mine_all.select_related("unit__criterion__aspect").order_by("-created_at", "-id")[:RECENT]
    )
    return AssessmentItem(
        unit=unit,
        text=unit.perturbation.text if unit.perturbation else unit.item.original,
        text_name=name,
        criterion_text=criterion.render(name),
        scale=list(range(criterion.scale_min, criterion.scale_max + 1)),
        assessment=assessment,
        held=held,
        previous=_previous(mine_all, assessment) if assessment else (recent[0] if recent else None),
        recent=recent,
        progress=annotator_progress(study, annotator),
        based_on=judgement_version(assessment),
    )


@dataclass
class GoldCheckItem:
    perturbation: Perturbation
    task_name: str
    task_description: str
    text_name: str
    criterion_text: str
    gold_check: GoldCheck | None
    held: bool
    previous: GoldCheck | None
    recent: list[GoldCheck]
    progress: AnnotatorProgress
    based_on: int = 0  # the label's version shown (see judgement_version)
    idempotency_key: uuid.UUID = field(default_factory=uuid.uuid4)


def gold_check_item(*, study: Study, annotator, perturbation_id: int) -> GoldCheckItem:
    """One adversarial text as this annotator labels it; 404 unless they hold it or labelled
    it. The task, the source and the search's criterion are shown; the judges' scores and the
    search's direction are not."""
    mine = {"study": study, "perturbation_id": perturbation_id, "annotator": annotator}
    held = GoldCheckSlot.objects.filter(**mine, done_at__isnull=True).exists()
    gold_check = GoldCheck.answers.filter(**mine).first()
    if not held and gold_check is None:
        raise Http404("This text is not assigned to you.")
    perturbation = Perturbation.objects.select_related("item__task", "item__dataset__task").get(
        pk=perturbation_id
    )
    task = perturbation.item.task or perturbation.item.dataset.task
    mine_all = GoldCheck.answers.filter(study=study, annotator=annotator)
    recent = list(mine_all.order_by("-created_at", "-id")[:RECENT])
    return GoldCheckItem(
        perturbation=perturbation,
        task_name=task.name if task else "",
        task_description=task.description if task else "",
        text_name=text_name(perturbation.item),
        criterion_text=str((perturbation.parameters or {}).get("criterion_text") or ""),
        gold_check=gold_check,
        held=held,
        previous=_previous(mine_all, gold_check) if gold_check else (recent[0] if recent else None),
        recent=recent,
        progress=annotator_progress(study, annotator),
        based_on=judgement_version(gold_check),
    )
