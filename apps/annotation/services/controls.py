"""Control items (docs/annotation.md, "Control items"): units with a known answer, handed out
unannounced among an annotator's real units at the study's rate, one in `control_every`.

Where they go: the units an annotator is handed form a sequence (position 0, 1, 2...: their
real answers and the controls served to them so far). Each block of `control_every`
positions has one control, at a place in the block drawn from a seed of (study, type,
annotator, block): about one in N, never predictable, the same on every run. A control is
served to an annotator at most once, and never one whose unit they hold or answered as real
work (and a real unit they met as a control is not handed to them: services/leases.py).

A control is shown exactly as a real unit (same page, same URL, same API fields); its answer
is saved by the shared `Work.submit` as an ordinary judgement with `control` set, which the
default manager of every judgement type leaves out of every figure and report.
"""

from __future__ import annotations

import csv
import io
import json
import random
from datetime import datetime, timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from apps.annotation.models import (
    CONTROL_UNITS,
    AssessmentUnit,
    ControlItem,
    ControlServe,
    Outcome,
    Study,
    StudyMembership,
    Verdict,
)
from apps.annotation.models.assessment import rated
from apps.annotation.services.participation import participant_hand_out
from apps.annotation.services.work import Unit, Work, served_control
from apps.catalog.models import Criterion
from apps.corpus.models import Perturbation, SourceItem


def control_due(seed: str, position: int, every: int) -> bool:
    """Whether position `position` of a queue is a control: one in each block of `every`,
    at a seeded place in the block."""
    if every < 2:
        return False
    block, place = divmod(position, every)
    return random.Random(f"{seed}:{block}").randrange(every) == place


def queue_seed(study: Study, work: Work, person) -> str:
    return f"{study.pk}:{work.slug}:{person.pk}"


def hand_out(
    work: Work, *, study: Study, person, now: datetime | None = None, page: bool = False
) -> Any | None:
    """The unit this person should do now: a control item when one is due (a `ControlServe`,
    which reads like a slot), else the type's own `next`. What the pages and API call
    (`page`: a page, see `Work.next`). A recruited participant's is held to their quota
    (services/participation.py)."""
    if study.archived:
        return None
    now = now or timezone.now()
    if getattr(person, "is_participant", False):  # within their quota
        return participant_hand_out(
            work, study=study, person=person, now=now, page=page, hand=_handed
        )
    return _handed(work, study=study, person=person, now=now, page=page)


def _handed(work: Work, *, study: Study, person, now: datetime, page: bool) -> Any | None:
    """`hand_out` for anyone: a control item when one is due, else the type's `next`."""
    if study.control_every and work.slug in CONTROL_UNITS:
        try:
            served = _control_now(work, study, person, now)
        except IntegrityError:  # the same control served in another tab meanwhile
            served = _control_now(work, study, person, now)
        if served is not None:
            return served
    return work.next(study=study, person=person, now=now, page=page)


def _control_now(work: Work, study: Study, person, now: datetime) -> ControlServe | None:
    until = now + timedelta(minutes=study.lease_minutes)
    with transaction.atomic():
        # One request per person at a time (two tabs), as for pooled slots.
        list(StudyMembership.objects.select_for_update().filter(study=study, user=person))
        serves = ControlServe.objects.filter(study=study, annotator=person, work=work.slug)
        held = (
            serves.filter(answered_at__isnull=True, skipped=False).select_related("control").first()
        )
        if held is not None:
            held.leased_until = until
            held.save(update_fields=["leased_until"])
            return held
        if work.holds(study=study, person=person):
            return None  # finish the real unit first
        real = work.model.objects.filter(study=study, **{work.model.person_field: person})
        position = serves.count() + real.count()
        seed = queue_seed(study, work, person)
        if not control_due(seed, position, study.control_every):
            return None
        if not work.waiting(study=study, person=person, now=now):
            return None  # no real work left: controls do not come alone
        control = _pick(work, study, person, f"{seed}:{position}")
        if control is None:
            return None
        return ControlServe.objects.create(
            study=study,
            control=control,
            annotator=person,
            work=work.slug,
            position=position,
            leased_until=until,
        )


def _pick(work: Work, study: Study, person, seed: str) -> ControlItem | None:
    """A control of this type not yet served to the person, whose unit they never met."""
    same = {name: OuterRef(name) for name in CONTROL_UNITS[work.slug]}
    mine = {"study": study, work.model.person_field: person}
    candidates = (
        ControlItem.objects.filter(study=study, work=work.slug)
        .exclude(serves__annotator=person)
        .exclude(Exists(work.model.answers.filter(**mine, **same)))
    )
    slots = work.slots_of(study=study, person=person)
    if slots is not None:
        candidates = candidates.exclude(Exists(slots.filter(**same)))
    ids = sorted(candidates.values_list("pk", flat=True))
    if not ids:
        return None
    return ControlItem.objects.get(pk=random.Random(seed).choice(ids))


def put_back(work: Work, *, study: Study, person, unit: Unit) -> None:
    """Skip: a control is dropped from the person's queue (it does not count); a real unit
    goes back the type's way."""
    served = served_control(work, study=study, person=person, unit=unit)
    if served is not None:
        if served.answered_at is None:
            served.skipped = True
            served.save(update_fields=["skipped"])
        return
    work.skip(study=study, person=person, unit=unit)


# --- defining control items (the study's researchers) ------------------------------------------

#: The answers a control of each type may expect.
EXPECTED = {
    "vetting": tuple(Verdict.values),
    "comparison": (Outcome.WORSE, Outcome.SAME, Outcome.BETTER),
}
#: The fields a control is given by (a form, the API, a row of an imported file).
FIELDS = ("work", "perturbation", "item", "criterion", "answer", "tolerance")


def control_add(
    *,
    study: Study,
    work: str,
    answer: object,
    perturbation: object = None,
    item: object = None,
    criterion: object = None,
    tolerance: object = 0,
) -> ControlItem:
    """A control item of one type, with its known answer (ValueError naming what is wrong,
    nothing saved):

    * vetting: `perturbation` and a verdict;
    * comparison: `perturbation`, `criterion` (one of the study's) and the perturbed text's
      outcome (worse, same or better);
    * direct assessment: the text (`item` for its original, or `perturbation`), `criterion`,
      and the rating on its scale, with a `tolerance`.

    Texts come from the study's datasets only.
    """
    if work not in CONTROL_UNITS:
        raise ValueError(
            f"work must be one of {', '.join(CONTROL_UNITS)} (the survey takes no control "
            "items: it asks opinions, there is no known answer)"
        )
    fields: dict[str, Any] = {"study": study, "work": work}
    if work in ("vetting", "comparison") or perturbation not in (None, ""):
        fields["perturbation"] = _perturbation(study, perturbation)
    if work != "vetting":
        fields["criterion"] = _criterion(study, criterion, work)
    if work == "assessment":
        fields = _assessment(study, fields, item=item, answer=answer, tolerance=tolerance)
    else:
        expected = str(answer or "").strip().lower()
        if expected not in EXPECTED[work]:
            raise ValueError(f"answer must be one of {', '.join(EXPECTED[work])}")
        fields["expected"] = expected
    unit = {name: fields[name] for name in CONTROL_UNITS[work]}
    if ControlItem.objects.filter(study=study, work=work, **unit).exists():
        raise ValueError("this unit is already a control item of the study")
    return ControlItem.objects.create(**fields)


def _number(value: object, name: str) -> int:
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a whole number, not {value!r}") from None


def _perturbation(study: Study, value: object) -> Perturbation:
    if value in (None, ""):
        raise ValueError("perturbation is required")
    found = Perturbation.objects.filter(
        pk=_number(value, "perturbation"), item__dataset__in=study.datasets.all()
    ).first()
    if found is None:
        raise ValueError(f"perturbation {value} is not in this study's datasets")
    return found


def _criterion(study: Study, value: object, work: str) -> Criterion:
    if value in (None, ""):
        raise ValueError("criterion is required")
    text = str(value).strip()
    chosen = study.criteria if work == "comparison" else rated(study).assessment_criteria
    found = chosen.filter(Q(key=text) | Q(pk=int(text)) if text.isdigit() else Q(key=text))
    criterion = found.first()
    if criterion is None:
        which = "compared under" if work == "comparison" else "rated under"
        raise ValueError(f"criterion {text!r} is not one the study's texts are {which}")
    return criterion


def _assessment(
    study: Study, fields: dict[str, Any], *, item: object, answer: object, tolerance: object
) -> dict[str, Any]:
    """The control's text x criterion as an `AssessmentUnit` (made inactive if the plan has
    none: it then gets no slots, only the control), with the known rating."""
    perturbation = fields.pop("perturbation", None)
    criterion = fields.pop("criterion")
    if perturbation is None:
        if item in (None, ""):
            raise ValueError("give the text: item (its original) or perturbation")
        source = SourceItem.objects.filter(
            pk=_number(item, "item"), dataset__in=study.datasets.all()
        ).first()
        if source is None:
            raise ValueError(f"item {item} is not in this study's datasets")
    else:
        source = perturbation.item
    score, spread = _number(answer, "answer"), _number(tolerance or 0, "tolerance")
    if not criterion.scale_min <= score <= criterion.scale_max:
        raise ValueError(
            f"answer {score} is outside {criterion.key}'s scale, "
            f"{criterion.scale_min} to {criterion.scale_max}"
        )
    if spread < 0:
        raise ValueError("tolerance must be 0 or more")
    unit, _ = AssessmentUnit.objects.get_or_create(
        study=study,
        item=source,
        perturbation=perturbation,
        criterion=criterion,
        defaults={"position": 0, "active": False},
    )
    return {**fields, "unit": unit, "expected_score": score, "tolerance": spread}


@transaction.atomic
def controls_import(*, study: Study, rows: list[dict[str, Any]]) -> list[ControlItem]:
    """Add every row as a control (`control_add`), or none: the first bad row is named."""
    added = []
    for number, row in enumerate(rows, start=1):
        values: dict[str, Any] = {
            name: row.get(name) for name in FIELDS if row.get(name) not in (None, "")
        }
        try:
            added.append(control_add(study=study, **values))
        except (ValueError, TypeError) as exc:
            raise ValueError(f"row {number}: {exc}") from None
    if not added:
        raise ValueError("the file has no rows")
    return added


def control_rows(name: str, data: bytes) -> list[dict[str, Any]]:
    """The rows of an uploaded CSV (with a header) or JSONL file (one object a line)."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ValueError("the file is not UTF-8 text") from None
    if name.lower().endswith((".jsonl", ".json", ".ndjson")):
        rows = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"line {number} is not JSON: {exc.msg}") from None
            if not isinstance(row, dict):
                raise ValueError(f"line {number} is not a JSON object")
            rows.append(row)
        return rows
    reader = csv.DictReader(io.StringIO(text))
    missing = {"work", "answer"} - set(reader.fieldnames or ())
    if missing:
        raise ValueError(f"the CSV header lacks {', '.join(sorted(missing))}")
    return [{k: (v or "").strip() for k, v in row.items() if k} for row in reader]


def control_remove(*, study: Study, control_id: int) -> None:
    """Delete a control item, with the answers given to it (they were never data)."""
    deleted, _ = ControlItem.objects.filter(study=study, pk=control_id).delete()
    if not deleted:
        raise ValueError("no such control item in this study")
