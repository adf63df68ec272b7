"""What the annotator's pages show: one vetting item (with its diff), one comparison, one
text to rate (direct assessment), or one adversarial text to label (gold validation)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from functools import cache
from typing import Any, TypeVar

from django.http import Http404

from apps import sql_rows as rows
from apps.annotation.kinds import AnnotatorProgress, annotator_progress
from apps.annotation.models import (
    Assessment,
    AssessmentSlot,
    AssessmentUnit,
    Comparison,
    ComparisonSlot,
    ControlServe,
    GoldCheck,
    GoldCheckSlot,
    Judgement,
    Study,
    Vetting,
    VettingSlot,
    judgement_version,
    original_shown_first,
)
from apps.annotation.selectors import shown
from apps.catalog.models import Aspect, Criterion, PerturbationKind, Task
from apps.corpus.diff import compute_diff, render_inline_html, render_side_by_side
from apps.corpus.models import Dataset, Perturbation, PerturbationVersion, SourceItem

J = TypeVar("J", bound=Judgement)


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
    progress: AnnotatorProgress
    based_on: int = 0  # the verdict's version shown (see judgement_version)
    idempotency_key: uuid.UUID = field(default_factory=uuid.uuid4)


@cache
def _item_sql() -> str:
    """`vetting_brief_sql` with, for the annotator: their answer on it, the latest version's
    author, whether they hold an open slot of it, the counts of the page's queue line and
    the unit of their last verdict."""
    v = rows.columns(Vetting, "v")
    slots, vettings = rows.table(VettingSlot), rows.table(Vetting)
    versions = rows.table(PerturbationVersion)
    mine = "study_id = %(study)s AND annotator_id = %(person)s"
    select, joins = _brief_parts(
        f"LEFT JOIN {vettings} v ON v.study_id = %(study)s AND v.perturbation_id = p.id "
        "AND v.annotator_id = %(person)s"
    )
    return (
        f"SELECT {select}, {v.sql}, "
        f"(SELECT pv.author_id FROM {versions} pv WHERE pv.perturbation_id = p.id "
        "ORDER BY pv.number DESC LIMIT 1), "
        f"EXISTS (SELECT 1 FROM {slots} WHERE {mine} AND perturbation_id = p.id "
        "AND done_at IS NULL), "
        f"(SELECT count(*) FROM {vettings} WHERE {mine}), "
        f"({shown.waiting_sql(rows.table(ComparisonSlot), mine)}), "
        f"(SELECT count(*) FROM {rows.table(Comparison)} WHERE {mine}), "
        f"{shown.latest_sql(Vetting)} "
        f"FROM {joins} WHERE p.id = %(perturbation)s"
    )


def vetting_page_sql() -> str:
    """The page's vetting item statement (read by a page's hand-out, services/leases.py)."""
    return _item_sql()


def vetting_page_item(study: Study, annotator, row: Any, held: bool | None) -> VettingItem:
    """The page's vetting item from a row of `_item_sql`; 404 unless it is theirs."""
    perturbation, at = _brief_load(row)
    perturbation_id = perturbation.pk
    text_name, version = row[at], row[at + 1]
    answer = rows.columns(Vetting, "v")
    vetting = answer.load(row, at + 2) if row[at + 2] is not None else None
    author, holds, vetted, waiting, compared, latest = row[at + 2 + answer.width :]
    if held is None:
        held = bool(holds) or holds_control(
            study=study, annotator=annotator, work="vetting", perturbation_id=perturbation_id
        )
    if not held and vetting is None:
        raise Http404("This item is not assigned to you.")
    progress = annotator_progress(study, annotator)
    progress.counted("vetting", done=vetted)
    progress.counted("comparison", done=compared, waiting=waiting)
    return VettingItem(
        perturbation=perturbation,
        panes=diff_panes(perturbation.diff_ops()),
        text_name=text_name,
        vetting=vetting,
        version=version or 1,
        edited_by_me=bool(version and author == annotator.pk),
        held=held,
        previous=_back(Vetting, study, annotator, vetting, latest),
        progress=progress,
        based_on=judgement_version(vetting),
    )


def vetting_item(
    *, study: Study, annotator, perturbation_id: int, held: bool | None = None
) -> VettingItem:
    """One perturbation as this annotator vets it; 404 unless they hold it or vetted it.
    `held`: known by the caller (it was just handed out)."""
    params = {"study": study.pk, "person": annotator.pk, "perturbation": perturbation_id}
    found = rows.fetch(_item_sql(), params)
    if not found:
        raise Http404("This item is not assigned to you.")
    return vetting_page_item(study, annotator, found[0], held)


def _back(model: type[J], study: Study, annotator, current: J | None, latest: Any) -> J | None:
    """Where a page read by plain SQL goes "back" to: the answer before the person's
    `current` one, else their last (`latest`: its unit, read with the item, selectors/shown.py)."""
    if current is None:
        return shown.latest_answer(model, latest)
    return _previous(model.answers.filter(study=study, annotator=annotator), current)


def _previous(mine, current):
    """The judgement before `current` (or the latest one, if None), for "back"."""
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
    progress: AnnotatorProgress
    idempotency_key: uuid.UUID = field(default_factory=uuid.uuid4)


def comparison_item(
    *, study: Study, annotator, perturbation_id: int, criterion_id: int, held: bool | None = None
) -> ComparisonItem:
    """One pair x criterion as this annotator compares it; 404 unless it is theirs: the
    pair, criterion, answer, whether it is held, the queue line's counts and the last
    choice's unit, in one statement (selectors/shown.py)."""
    unit = {"perturbation_id": perturbation_id, "criterion_id": criterion_id}
    params = {"study": study.pk, "person": annotator.pk, "perturbation": perturbation_id}
    found = rows.fetch(shown.comparison_item_sql(), {**params, "criterion": criterion_id})
    if not found:
        raise Http404("This comparison is not assigned to you.")
    perturbation, criterion, name, at = shown.comparison_load(found[0])
    answers = rows.columns(Comparison, "j")
    comparison = answers.load(found[0], at) if found[0][at] is not None else None
    holds, done, waiting, latest = found[0][at + answers.width :]
    held = bool(
        held or holds or holds_control(study=study, annotator=annotator, work="comparison", **unit)
    )
    if not held and comparison is None:
        raise Http404("This comparison is not assigned to you.")
    first = comparison.original_first if comparison else None
    item = _comparison_shown(study, annotator, unit, perturbation, criterion, name, first)
    item.comparison, item.held = comparison, held
    item.previous = _back(Comparison, study, annotator, comparison, latest)
    item.progress.counted("comparison", done=done, waiting=waiting)
    return item


def _comparison_shown(
    study: Study,
    annotator,
    unit: dict[str, int],
    perturbation: Perturbation,
    criterion: Criterion,
    name: str,
    original_first: bool | None,
) -> ComparisonItem:
    """What a pair x criterion shows (the API's item): no answer, no history yet."""
    if original_first is None:
        original_first = original_shown_first(study_id=study.pk, user_id=annotator.pk, **unit)
    original_first = bool(original_first)  # SQLite reads a boolean as 0 or 1
    original, perturbed = perturbation.item.original, perturbation.text
    return ComparisonItem(
        perturbation=perturbation,
        criterion=criterion,
        criterion_text=criterion.render(name),
        text_name=name,
        first_text=original if original_first else perturbed,
        second_text=perturbed if original_first else original,
        original_first=original_first,
        comparison=None,
        held=True,
        previous=None,
        progress=annotator_progress(study, annotator),
    )


def comparison_brief(*, study: Study, annotator, slot: ComparisonSlot | ControlServe) -> Any:
    """The API's comparison: read with the slot when it was handed out, else the page's
    item."""
    unit = {"perturbation_id": slot.perturbation_id, "criterion_id": slot.criterion_id}
    row = getattr(slot, "shown", None)
    if row is None:
        return comparison_item(study=study, annotator=annotator, **unit, held=True)
    perturbation, criterion, name, at = shown.comparison_load(row)
    return _comparison_shown(study, annotator, unit, perturbation, criterion, name, row[at])


@dataclass
class VettingBrief:
    """A vetting item for the API: the perturbation with its stored diff, no HTML."""

    perturbation: Perturbation
    text_name: str
    version: int
    leased_until: object


def _brief_parts(extra_join: str = "") -> tuple[str, str]:
    """The select list and the joins of a perturbation shown for vetting: it, its item, its
    kind and the kind's aspect, the name of the texts, the latest version's number."""
    p, i = rows.columns(Perturbation, "p"), rows.columns(SourceItem, "i")
    k, a = rows.columns(PerturbationKind, "k"), rows.columns(Aspect, "a")
    versions, tasks = rows.table(PerturbationVersion), rows.table(Task)
    select = (
        f"{p.sql}, {i.sql}, {k.sql}, {a.sql}, COALESCE(t.text_name, dt.text_name, 'text'), "
        f"(SELECT pv.number FROM {versions} pv WHERE pv.perturbation_id = p.id "
        "ORDER BY pv.number DESC LIMIT 1)"
    )
    joins = (
        f"{rows.table(Perturbation)} p JOIN {rows.table(SourceItem)} i ON i.id = p.item_id "
        f"JOIN {rows.table(Dataset)} d ON d.id = i.dataset_id "
        f"LEFT JOIN {tasks} t ON t.id = i.task_id LEFT JOIN {tasks} dt ON dt.id = d.task_id "
        f"JOIN {rows.table(PerturbationKind)} k ON k.id = p.kind_id "
        f"LEFT JOIN {rows.table(Aspect)} a ON a.id = k.target_aspect_id {extra_join}"
    )
    return select, joins


def _brief_load(row) -> tuple[Perturbation, int]:
    """The perturbation (item, kind and aspect attached) of a row of `_brief_parts`, and
    where the row goes on after it (the text name, then the version)."""
    at, loaded = 0, []
    for model, alias in ((Perturbation, "p"), (SourceItem, "i"), (PerturbationKind, "k")):
        columns = rows.columns(model, alias)
        loaded.append(columns.load(row, at))
        at += columns.width
    perturbation, item, kind = loaded
    aspect = rows.columns(Aspect, "a")
    kind.target_aspect = aspect.load(row, at) if row[at] is not None else None
    perturbation.item, perturbation.kind = item, kind
    return perturbation, at + aspect.width


@cache
def vetting_brief_sql() -> str:
    """The API's vetting item: a perturbation (`_brief_parts`), read with the slot that hands
    it out (selectors/handed.py) or alone."""
    select, joins = _brief_parts()
    return f"SELECT {select} FROM {joins} WHERE p.id = %(perturbation)s"


def vetting_brief(slot: VettingSlot | ControlServe) -> VettingBrief:
    """The API's vetting item: read with the slot when it was handed out, else one
    statement written once (apps/sql_rows.py)."""
    row = (
        getattr(slot, "shown", None)
        or rows.fetch(vetting_brief_sql(), {"perturbation": slot.perturbation_id})[0]
    )
    perturbation, at = _brief_load(row)
    perturbation.diff_ops()  # computed once and stored
    text_name, version = row[at], row[at + 1]
    return VettingBrief(perturbation, text_name, version or 1, slot.leased_until)


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
    progress: AnnotatorProgress
    based_on: int = 0  # the rating's version shown (see judgement_version)
    idempotency_key: uuid.UUID = field(default_factory=uuid.uuid4)

    @property
    def keyed(self) -> bool:
        """Each score has its digit key (scales within 0-9, or 1-10 with 0 for 10)."""
        return len(self.scale) <= 10 and self.scale[0] >= 0 and self.scale[-1] <= 10


def assessment_item(
    *, study: Study, annotator, unit_id: int, held: bool | None = None, shown_row: Any = None
) -> AssessmentItem:
    """One text x criterion as this annotator rates it; 404 unless they hold it or rated it.
    Whether the text is an original or a perturbed one is not shown. `shown_row`: the row
    read with the slot just handed out (selectors/handed.py), not read again."""
    params = {"study": study.pk, "person": annotator.pk, "unit": unit_id}
    found = [shown_row] if shown_row else rows.fetch(shown.assessment_item_sql(), params)
    if not found:
        raise Http404("This text is not assigned to you.")
    unit, name, at = shown.assessment_load(found[0])
    answers = rows.columns(Assessment, "j")
    assessment = answers.load(found[0], at) if found[0][at] is not None else None
    version, holds, done, latest = found[0][at + answers.width :]
    held = bool(held or holds) or holds_control(
        study=study, annotator=annotator, work="assessment", unit_id=unit_id
    )
    if not held and assessment is None:
        raise Http404("This text is not assigned to you.")
    item = _assessment_shown(study, annotator, unit, name, version)
    item.assessment, item.held = assessment, held
    item.previous = _back(Assessment, study, annotator, assessment, latest)
    item.progress.counted("assessment", done=done)
    return item


def _assessment_shown(
    study: Study, annotator, unit: AssessmentUnit, name: str, version: int
) -> AssessmentItem:
    """What a text to rate shows (the API's item): no answer, no history yet."""
    criterion = unit.criterion
    return AssessmentItem(
        unit=unit,
        text=unit.perturbation.text if unit.perturbation else unit.item.original,
        text_name=name,
        criterion_text=criterion.render(name),
        scale=list(range(criterion.scale_min, criterion.scale_max + 1)),
        assessment=None,
        held=True,
        previous=None,
        progress=annotator_progress(study, annotator),
        based_on=version,
    )


def assessment_brief(*, study: Study, annotator, slot: AssessmentSlot | ControlServe) -> Any:
    """The API's text to rate: read with the slot when it was handed out (PostgreSQL), else
    the page's item."""
    row = getattr(slot, "shown", None)
    if row is None:
        return assessment_item(study=study, annotator=annotator, unit_id=slot.unit_id, held=True)
    unit, name, at = shown.assessment_load(row)
    version = row[at + rows.columns(Assessment, "j").width]  # after the person's rating
    return _assessment_shown(study, annotator, unit, name, version)


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
    progress: AnnotatorProgress
    based_on: int = 0  # the label's version shown (see judgement_version)
    idempotency_key: uuid.UUID = field(default_factory=uuid.uuid4)


def gold_check_item(
    *, study: Study, annotator, perturbation_id: int, held: bool | None = None
) -> GoldCheckItem:
    """One adversarial text as this annotator labels it; 404 unless they hold it or labelled
    it. The task, the source and the search's criterion are shown; the judges' scores and the
    search's direction are not."""
    params = {"study": study.pk, "person": annotator.pk, "perturbation": perturbation_id}
    found = rows.fetch(shown.gold_check_item_sql(), params)
    if not found:
        raise Http404("This text is not assigned to you.")
    return gold_check_page_item(study, annotator, found[0], held)


def gold_check_page_item(study: Study, annotator, row: Any, held: bool | None) -> GoldCheckItem:
    """The page's adversarial text from a row of `gold_check_item_sql`; 404 unless it is
    theirs."""
    perturbation, names, at = shown.gold_check_load(row)
    answers = rows.columns(GoldCheck, "j")
    gold_check = answers.load(row, at) if row[at] is not None else None
    version, holds, done, latest = row[at + answers.width :]
    held = bool(held or holds)
    if not held and gold_check is None:
        raise Http404("This text is not assigned to you.")
    item = _gold_check_shown(study, annotator, perturbation, names, version)
    item.gold_check, item.held = gold_check, held
    item.previous = _back(GoldCheck, study, annotator, gold_check, latest)
    item.progress.counted("gold_check", done=done)
    return item


def _gold_check_shown(
    study: Study, annotator, perturbation: Perturbation, names: tuple[str, str, str], version: int
) -> GoldCheckItem:
    """What an adversarial text shows (the API's item): no answer, no history yet."""
    text_name, task_name, task_description = names
    return GoldCheckItem(
        perturbation=perturbation,
        task_name=task_name,
        task_description=task_description,
        text_name=text_name,
        criterion_text=str((perturbation.parameters or {}).get("criterion_text") or ""),
        gold_check=None,
        held=True,
        previous=None,
        progress=annotator_progress(study, annotator),
        based_on=version,
    )


def gold_check_brief(*, study: Study, annotator, slot: GoldCheckSlot) -> Any:
    """The API's adversarial text: read with the slot when it was handed out (PostgreSQL),
    else the page's item."""
    row = getattr(slot, "shown", None)
    if row is None:
        return gold_check_item(
            study=study, annotator=annotator, perturbation_id=slot.perturbation_id, held=True
        )
    perturbation, names, at = shown.gold_check_load(row)
    version = row[at + rows.columns(GoldCheck, "j").width]  # after the person's label
    return _gold_check_shown(study, annotator, perturbation, names, version)
