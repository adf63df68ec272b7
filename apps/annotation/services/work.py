"""One pattern for human work: a unit of work handed to a person, and their answer saved once.

A type of work (vetting, comparison, direct assessment, the expert survey) is a `Work`: its
judgement model (a `Judgement` subclass), who does it, how units are handed out (`next`,
`skip`: pooled slots with leases in `PooledWork`, slots owned by one annotator, or all at
once), and a few hooks around the one `submit` below, which every page and API call goes
through: idempotency key, stale-tab check (`based_on`), slot closing, history. The pages
(views/work.py) and the API (api/work.py) are generic over `Work`; docs/annotation.md, "One
pattern for human work", lists what a new type provides.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar, Generic, TypeVar

from django.db import models
from django.db.models import Count, Max, Q
from django.utils import timezone

from apps import sql_rows as rows
from apps.accounts.models import Role
from apps.annotation.kinds import (
    Counted,
    Figure,
    Queue,
)
from apps.annotation.models import (
    CONTROL_UNITS,
    ControlServe,
    Judgement,
    JudgementChange,
    Study,
    judgement_version,
    unit_of,
)
from apps.annotation.selectors.plan_preview import KindPreview
from apps.annotation.services.errors import StaleJudgement, WorkRefused
from apps.annotation.services.saving import (
    KEY_SEEN,
    Repeated,
    created_with_change,
    locked_or_created,
    snapshot,
    submit_once,
)

J = TypeVar("J")
Unit = dict[str, Any]  # a unit's lookup: {"perturbation_id": 3, "criterion_id": 7}
#: How many of a person's last answers their page lists ("Your last verdicts").
RECENT = 8


@dataclass(frozen=True)
class SqlValue:
    """A unit field's value the request does not name, as an SQL expression (and its
    parameters) the save's first step finds the answer by (`read_back` then gives the
    value): the expert survey's task, the task of the metric voted for."""

    sql: str
    params: tuple[Any, ...]


@dataclass(frozen=True)
class Saved(Generic[J]):
    """A saved judgement; `new` is False when the submit was a repeat of one already saved."""

    judgement: J
    new: bool


@dataclass(frozen=True)
class Locked:
    """What the save's first step found: the unit (its `SqlValue` fields given their
    values), the person's earlier answer, their slot marked done ((slot or None), or None
    when `close` does it) and what `values` gets as `held`."""

    unit: Unit
    earlier: Any | None
    closed: tuple[Any | None] | None
    held: Any


@dataclass(frozen=True)
class PlanPart:
    """What building the plan made of one type of work: its slots, and why the design could
    not be met, if it could not."""

    slots: int
    problem: str = ""


class Work:
    """A type of human work on the shared pattern (subclass it, then `register` one)."""

    slug: ClassVar[str]  # "vetting": progress keys, API route names, the plan summary
    name: ClassVar[str]  # "Vetting"
    position: ClassVar[int]  # where it stands in the study's pipeline
    action: ClassVar[str]  # the button that starts it: "Vet perturbations"
    model: ClassVar[type[Judgement]]
    role: ClassVar[str] = Role.ANNOTATOR
    #: What a repeated idempotency key must have submitted again (else 409).
    answer_keys: ClassVar[tuple[str, ...]]
    #: What the answer is called in messages ("verdict").
    answer_noun: ClassVar[str] = "answer"
    skipped_message: ClassVar[str] = "Skipped: put back in the queue"
    #: The progress page's count of answers: (its key in the API, label, id on the page).
    answers_figure: ClassVar[tuple[str, str, str]]
    #: What the list of a person's last answers shows of each, beside the unit (related rows).
    recent_related: ClassVar[tuple[str, ...]] = ()

    # --- what the study asks for -----------------------------------------------------------

    def opted_in(self, study: Study) -> bool:
        """Whether the study asks for this work (its people see the button)."""
        return True

    def asks(self, study: Study) -> bool:
        """`opted_in`, asked once per study object: a page that asks it in several places
        (the progress page: figures, then agreement) makes one query, not one each."""
        asked = study.__dict__.setdefault("_work_opted_in", {})
        if self.slug not in asked:
            asked[self.slug] = self.opted_in(study)
        return bool(asked[self.slug])

    def plan(self, *, study: Study) -> PlanPart | None:
        """Bring this work's slots up to date with the study (inside the plan's transaction,
        after the study's perturbations are); None for work without slots."""
        return None

    def preview(self, choices: Mapping[str, Any]) -> KindPreview | None:
        """What the plan of these unsaved set-up choices would hand out of this work, when it
        is the kind's own (its settings, `study_settings`); None: the plan preview counts it
        (selectors/plan_preview.py) or the choices do not ask for it."""
        return None

    def demo(self, study: Study) -> None:
        """Ask the demo study (apps/annotation/demo.py) for this work, where the kind's own
        settings decide whether it is asked for."""

    # --- handing out -----------------------------------------------------------------------

    def next(
        self, *, study: Study, person, now: datetime | None = None, page: bool = False
    ) -> Any | None:
        """The unit (a slot) this person should do now, or None when nothing is left.
        `page`: a page shows it (a type may read the page's item with the hand-out, as the
        slot's `item`)."""
        return None

    def holds(self, *, study: Study, person) -> bool:
        """Whether the person holds a real unit they have not answered (it comes first)."""
        return False

    def waiting(self, *, study: Study, person, now: datetime) -> bool:
        """Whether real work is left for the person (control items never come alone)."""
        return False

    def slots_of(self, *, study: Study, person) -> Any | None:
        """The person's slots (a queryset with the unit's fields), if the type has slots: a
        control item is never one of their units."""
        return None

    def skip(self, *, study: Study, person, unit: Unit) -> None:
        raise WorkRefused(f"{self.name} cannot be skipped.")

    def release(self, *, study: Study, person) -> None:
        """Give back what this person holds and has not finished (they left the study)."""

    def unit_from(self, data: Mapping[str, Any]) -> Unit:
        """A unit from the API's fields or a page's URL (`perturbation` or `perturbation_pk`)."""
        unit = {}
        for name in self.model.unit_fields:
            value = data.get(name, data.get(f"{name}_pk"))
            if value is not None:
                unit[f"{name}_id"] = int(value)
        return unit

    def item(self, *, study: Study, person, unit: Unit, held: bool | None = None) -> Any:
        """What the page shows of one unit (404 unless it is this person's); `held`: the
        caller knows the person holds it (it was just handed out)."""
        raise NotImplementedError

    def handed_item(self, *, study: Study, person, slot: Any) -> Any:
        """`item` of the unit just handed out (`slot`, which the person holds): the one the
        hand-out read when it could (services/leases.py, `page_sql`), else read now."""
        if getattr(slot, "item", None) is not None:
            return slot.item
        unit = unit_of(slot, self.model.unit_fields)
        return self.item(study=study, person=person, unit=unit, held=True)

    def recent(self, *, study: Study, person) -> list[Any]:
        """The person's last answers, latest first: the list a page loads when they open it
        (not with every unit: docs/annotation.md, "Speed")."""
        mine = self.model.answers.filter(study=study, **{self.model.person_field: person})
        latest = mine.select_related(*self.recent_related).order_by("-created_at", "-id")
        return list(latest[:RECENT])

    # --- saving ----------------------------------------------------------------------------

    def submit(
        self,
        *,
        study: Study,
        person,
        unit: Unit,
        answer: Mapping[str, Any],
        idempotency_key: uuid.UUID,
        based_on: int | None = None,
        active_seconds: float | None = None,
    ) -> Saved[Any]:
        """Save (or change) this person's answer on the unit; a repeated key saves nothing
        again, a key reused for another answer is refused (KeyReused), and a `based_on`
        version that is no longer the answer's (another tab saved since) is refused
        (StaleJudgement). Nothing is saved on any refusal. Check, lock, write, after.
        `active_seconds` (time on task, as the page measured it) goes on the change."""
        unit = self.checked(study=study, unit=unit, answer=answer)
        # A control item (services/controls.py) is answered like any unit, but the answer is
        # not data: no slot, no consensus, `control` set.
        served = served_control(self, study=study, person=person, unit=unit)

        def save() -> JudgementChange:
            locked = self._locked(
                study=study, person=person, unit=unit, key=idempotency_key, served=served
            )
            if based_on is not None and judgement_version(locked.earlier) != based_on:
                raise StaleJudgement(self.stale_message(locked.earlier))
            change, counted = self._written(
                study=study,
                person=person,
                locked=locked,
                answer=answer,
                key=idempotency_key,
                based_on=based_on,
                served=served,
                active_seconds=active_seconds,
            )
            if served is None:
                self.after_save(
                    study=study, judgement=change.target, held=locked.held, counted=counted
                )
            else:
                ControlServe.objects.filter(pk=served.pk, answered_at__isnull=True).update(
                    answered_at=timezone.now()
                )
            return change

        change, new = submit_once(
            key=idempotency_key,
            user=person,
            judgement=self.model.judgement_kind,
            answer={name: answer[name] for name in self.answer_keys},
            save=save,
            asked_in_save=True,
        )
        return Saved(change.target, new)

    def _locked(
        self, *, study: Study, person, unit: Unit, key: uuid.UUID, served: ControlServe | None
    ) -> Locked:
        """The save's first step (`answer_locked`): the unit's lock (`lock_sql`), the key's
        check, the slot closed (a control item's answer closes none), the earlier answer
        locked, and what `values` reads (`read_sql`)."""
        lock = None if served else self.lock_sql(study=study, unit=unit, person=person)
        read = self.read_sql(study=study, unit=unit)
        earlier, closed, value = answer_locked(
            self.model,
            study=study,
            person=person,
            unit=unit,
            key=key,
            close=None if served else self.closing(),
            read=read,
            lock=lock,
        )
        held = None
        if lock is not None:
            held = self.locked(value)
        elif read is not None:
            unit, held = self.read_back(unit=unit, value=value)
        return Locked(unit, earlier, closed, held)

    def _written(
        self,
        *,
        study: Study,
        person,
        locked: Locked,
        answer: Mapping[str, Any],
        key: uuid.UUID,
        based_on: int | None,
        served: ControlServe | None,
        active_seconds: float | None,
    ) -> tuple[JudgementChange, Any]:
        """The answer and the change recording it; and `counted_sql`'s value (a new answer)."""
        model, unit, earlier = self.model, locked.unit, locked.earlier
        lookup = {"study": study, model.person_field: person, **unit}
        slot = None
        if served is None:
            revisit = earlier is not None
            slot = self.close(
                study=study, person=person, unit=unit, revisit=revisit, closed=locked.closed
            )
        values = self.values(
            study=study,
            person=person,
            unit=unit,
            answer=answer,
            earlier=earlier,
            slot=slot,
            held=locked.held,
        )
        if served is not None:
            values["control"] = served.control
        if earlier is None:  # the usual case: both rows in one statement
            created = created_with_change(
                model,
                values={**lookup, **values},
                fields=model.answer_fields,
                user=person,
                key=key,
                extra=None if served else self.counted_sql(study=study, unit=unit),
                active_seconds=active_seconds,
            )
            if created is not None:
                return created
            if based_on is not None:
                # Created meanwhile (another tab), after this request read no answer.
                raise StaleJudgement(self.stale_message(model.answers.filter(**lookup).first()))
        judgement, before = locked_or_created(
            model,
            lookup=lookup,
            values=values,
            fields=model.answer_fields,
            locked=earlier,
            looked_up=earlier is not None,
        )
        after = snapshot(judgement, model.answer_fields)
        change = JudgementChange.of(
            judgement,
            user=person,
            key=key,
            before=before,
            after=after,
            active_seconds=active_seconds,
        )
        rows.insert(change)  # a repeated key still raises (IntegrityError)
        return change, None

    def checked(self, *, study: Study, unit: Unit, answer: Mapping[str, Any]) -> Unit:
        """Refuse a malformed answer (ValueError) or a unit outside the study (WorkRefused),
        before anything is written; return the full unit."""
        return unit

    def lock_sql(self, *, study: Study, unit: Unit, person: Any) -> tuple[str, list[Any]] | None:
        """What saves of this unit must queue on, as a `SELECT ... FOR UPDATE` of one row
        (and its parameters), taken first by the save (`answer_locked`); its row, or None,
        goes to `locked`. None: nothing to lock."""
        return None

    def locked(self, row: tuple[Any, ...] | None) -> Any:
        """`values`'s `held` from the row `lock_sql` read (it may carry what `values` needs
        of the person), or the save's refusal (no row)."""
        return row

    def read_sql(self, *, study: Study, unit: Unit) -> tuple[str, list[Any]] | None:
        """What `values` needs of the unit, as a scalar subquery (and its parameters) read by
        the save's first step, its value given to `values` as `held` (for a type with no
        `lock_sql`); None: nothing to read."""
        return None

    def read_back(self, *, unit: Unit, value: Any) -> tuple[Unit, Any]:
        """The unit (its `SqlValue` fields given their values) and `values`'s `held`, from
        what `read_sql` read; a refusal here (WorkRefused) rolls the save back."""
        return unit, value

    def closing(self) -> type[models.Model] | None:
        """The slot model whose row of the person and unit the save's first step marks done
        (`close` then gets it as `closed`); None: `close` does it itself."""
        return None

    def close(
        self,
        *,
        study: Study,
        person,
        unit: Unit,
        revisit: bool,
        closed: tuple[Any | None] | None = None,
    ) -> Any | None:
        """Mark the person's slot of the unit done, or refuse work never handed to them
        (`revisit`: they are changing an answer they gave). Returns the slot, if any.
        `closed`: (their slot, already marked done, or None) when the save's first read did
        it (see `closing`)."""
        return None

    def values(
        self,
        *,
        study: Study,
        person,
        unit: Unit,
        answer: Mapping[str, Any],
        earlier: Any | None,
        slot: Any | None,
        held: Any = None,
    ) -> dict[str, Any]:
        """The judgement's fields: from the answer, and what the earlier answer or the slot
        fixed (the group, the order the texts were shown in)."""
        raise NotImplementedError

    def counted_sql(self, *, study: Study, unit: Unit) -> tuple[str, list[Any]] | None:
        """What `after_save` counts, as a scalar subquery (and its parameters) read with the
        insert of a new answer: it does not see that answer."""
        return None

    def after_save(self, *, study: Study, judgement: Any, held: Any, counted: Any = None) -> None:
        """What else changes with the answer (in the same transaction); `counted`: the
        value of `counted_sql` when the answer is new, else None."""

    def label(self, judgement: Any) -> str:
        """The answer in words, for messages."""
        return str(getattr(judgement, judgement.value_field))

    def stale_message(self, earlier: Any | None) -> str:
        now = self.label(earlier) if earlier is not None else "none"
        return (
            f"Your {self.answer_noun} on this item was changed in another tab or window since "
            f"this page was opened (it is now: {now}). Nothing was saved; reload the page to "
            "see it and answer again."
        )

    # --- progress --------------------------------------------------------------------------

    def queue(
        self, *, study: Study, person, fresh: bool = False, counted: Counted | None = None
    ) -> Queue:
        """`counted`: the person's counts, when the caller read them already."""
        done = counted[0] if counted else self.mine(study, person).count()
        return Queue(done=done)

    def mine(self, study: Study, person):
        """The person's answers, a control item's too (what they see of their own work)."""
        return self.model.answers.filter(study=study, **{self.model.person_field: person})

    def figures(self, study: Study, answers: int) -> list[Figure]:
        """The counts of the researcher's progress page: `answers` (counted by the caller,
        from `done_by`), then the slots'."""
        key, label, id = self.answers_figure
        return [Figure(key, label, answers, id), *self.slot_figures(study)]

    def slot_figures(self, study: Study) -> list[Figure]:
        return []

    def done_by(self, study: Study) -> dict[int, tuple[int, datetime | None]]:
        """{person id: (answers, last saved)} in one query."""
        person = f"{self.model.person_field}_id"
        rows = (
            self.model._default_manager.filter(study=study)
            .values_list(person)
            .annotate(n=Count("id"), last=Max("updated_at"))
            .order_by()
        )
        return {user_id: (n, last) for user_id, n, last in rows}

    def agreement_rows(self, study: Study) -> list[tuple[tuple, int, Any]]:
        """(unit, person, value) of every answer: what agreement statistics compare."""
        model = self.model
        units = [f"{name}_id" for name in model.unit_fields]
        rows = model._default_manager.filter(study=study).values_list(
            *units, f"{model.person_field}_id", model.value_field
        )
        return [((self.slug, *row[:-2]), row[-2], row[-1]) for row in rows]


@functools.cache
def _answer_parts(
    model: type[Judgement],
    unit: tuple[tuple[str, str], ...],
    slots: type[models.Model] | None,
    after_lock: str = "",
) -> tuple[str, str]:
    """The statements of `answer_locked`: the slot marked done (RETURNING it; "" without
    `slots`) and the answer locked. `unit`: (column, its value's placeholder or SQL) pairs;
    `after_lock`: a condition both wait on (the unit's lock, when they run as one)."""
    person = f"{model.person_field}_id"
    of_unit = "".join(f' AND "{name}" = {value}' for name, value in unit)
    closed = ""
    if slots is not None:
        returned = rows.columns(slots, "x").sql.replace('x."', '"')
        closed = (
            f"UPDATE {rows.table(slots)} SET done_at = COALESCE(done_at, %s) "
            f'WHERE "study_id" = %s AND "annotator_id" = %s{of_unit}{after_lock} '
            f"RETURNING {returned}"
        )
    mine = (
        f"SELECT {rows.columns(model, 'j').sql} FROM {rows.table(model)} j "
        f'WHERE "study_id" = %s AND "{person}" = %s{of_unit}{after_lock} FOR UPDATE'
    )
    return closed, mine


@functools.cache
def _answer_sql(
    model: type[Judgement],
    unit: tuple[tuple[str, str], ...],
    slots: type[models.Model] | None,
    read: str,
    lock: str = "",
) -> str:
    """`_answer_parts`, the key's check, `read` and `lock` as one statement (PostgreSQL)."""
    # The row saves of the unit queue on is locked first: the slot's update and the answer's
    # lock wait for it (a condition on it alone, checked before they touch a row).
    locking, after_lock = "", ""
    if lock:
        locking, after_lock = f"unit_lock AS ({lock}), ", " AND EXISTS (SELECT 1 FROM unit_lock)"
    closing, mine = _answer_parts(model, unit, slots, after_lock)
    closed, selected = "", "mine.*"
    if slots is not None:
        closed, selected = f"closed AS ({closing}), ", "mine.*, closed.*"
    return (
        f"WITH {locking}{closed}mine AS ({mine}) "
        f"SELECT EXISTS ({KEY_SEEN}), {selected}{', ' + read if read else ''}"
        f"{', unit_lock.*' if lock else ''} FROM (SELECT 1) one"
        + (" LEFT JOIN unit_lock ON true" if lock else "")
        + " LEFT JOIN mine ON true"
        + (" LEFT JOIN closed ON true" if slots is not None else "")
    )


def answer_locked(
    model: type[Judgement],
    *,
    study: Study,
    person,
    unit: Unit,
    key: uuid.UUID,
    close: type[models.Model] | None = None,
    read: tuple[str, list[Any]] | None = None,
    lock: tuple[str, list[Any]] | None = None,
) -> tuple[Any | None, tuple[Any | None] | None, Any]:
    """The person's answer on the unit (a control item's too), locked for the save. With
    it: raises Repeated (services/saving.py) when `key` was used already; marks the person's
    slot of the unit done in the `close` table: (the slot or None), else None; reads `read`
    (a scalar subquery and its parameters: its value, a JSON value decoded, else None). A
    unit field may be a `SqlValue` (the answer is found by that expression). `lock` (a
    `SELECT ... FOR UPDATE` of one row and its parameters) is taken first: its row, or None
    (then nothing else is done, nor Repeated raised), is the value instead of `read`'s.
    PostgreSQL runs it all as one statement (`_answer_sql`), SQLite its parts one by one."""
    names = tuple((name, getattr(value, "sql", "%s")) for name, value in unit.items())
    of_unit = [
        bound
        for value in unit.values()
        for bound in (value.params if isinstance(value, SqlValue) else (value,))
    ]
    mine_params: list[Any] = [study.pk, person.pk, *of_unit]
    close_params = [timezone.now(), *mine_params]
    read_sql, read_params = read or ("", [])
    answers = rows.columns(model, "j")
    if not rows.chained():
        return _answer_locked_apart(model, names, close, mine_params, close_params, key, read, lock)
    lock_sql, lock_params = lock or ("", [])
    params = [*(close_params if close is not None else []), *mine_params, key]
    sql = _answer_sql(model, names, close, read_sql, lock_sql)
    found = rows.fetch(sql, [*lock_params, *params, *read_params])[0]
    locked = None
    if lock is not None:
        width = len(found) - (1 + answers.width) - (1 if read else 0)
        if close is not None:
            width -= rows.columns(close, "x").width
        locked = found[-width:]
        if locked[0] is None:  # no such row: the caller refuses the save
            return None, None, None
        found = found[:-width]
    if found[0]:
        raise Repeated
    earlier = answers.load(found, 1) if found[1] is not None else None
    value = locked if lock is not None else (rows.json_value(found[-1]) if read else None)
    if close is None:
        return earlier, None, value
    start = 1 + answers.width
    slot = rows.columns(close, "x").load(found, start) if found[start] else None
    return earlier, (slot,), value


def _answer_locked_apart(
    model: type[Judgement],
    names: tuple[tuple[str, str], ...],
    close: type[models.Model] | None,
    mine_params: list[Any],
    close_params: list[Any],
    key: uuid.UUID,
    read: tuple[str, list[Any]] | None,
    lock: tuple[str, list[Any]] | None,
) -> tuple[Any | None, tuple[Any | None] | None, Any]:
    """`answer_locked`'s statements one by one, in its order (SQLite)."""
    value = None
    if lock is not None:
        found = rows.fetch(*lock)
        if not found:
            return None, None, None
        value = found[0]
    if rows.fetch(KEY_SEEN, [key]):
        raise Repeated
    closing, mine = _answer_parts(model, names, close)
    closed = None
    if close is not None:
        slots = rows.fetch(closing, close_params)
        closed = (rows.columns(close, "x").load(slots[0]) if slots else None,)
    answers = rows.fetch(mine, mine_params)
    earlier = rows.columns(model, "j").load(answers[0]) if answers else None
    if read is not None and lock is None:
        value = rows.json_value(rows.fetch(f"SELECT {read[0]}", read[1])[0][0])
    return earlier, closed, value


def served_control(work: Work, *, study: Study, person, unit: Unit) -> ControlServe | None:
    """The control this person was served on this unit, if the unit was one for them (only
    while the study mixes control items in: turned off, what was served and not answered is
    dropped)."""
    if not study.control_every or work.slug not in CONTROL_UNITS or not unit:
        return None
    lookup = {f"control__{name}": value for name, value in unit.items()}
    return (
        ControlServe.objects.filter(study=study, annotator=person, work=work.slug, **lookup)
        .select_related("control")
        .first()
    )


def slot_figures(slots, prefix: str, label: str) -> list[Figure]:
    """Done / total and held-now figures of a slot table (one aggregate query)."""
    now = timezone.now()
    counts = slots.aggregate(
        n=Count("id"),
        done=Count("id", filter=Q(done_at__isnull=False)),
        held=Count("id", filter=Q(done_at__isnull=True, leased_until__gte=now)),
    )
    done = Figure(
        f"{prefix}_done",
        f"{label} slots done",
        counts["done"],
        f"{prefix}-done",
        total=counts["n"],
        total_key=f"{prefix}_slots",
    )
    held = Figure(f"{prefix}_leased", f"{label} slots held now", counts["held"], f"{prefix}-leased")
    return [done, held]
