"""Pooled work: units any annotator of the study may take while k answers are missing.

Vetting and direct assessment hand out work this way (`PooledWork`). How "next item" stays
correct under load: a unit needing k answers has exactly k slot rows. An annotator first gets
back a slot they already hold, with the lease renewed (requests of one annotator, e.g. from
two tabs, queue on their membership row). Otherwise the first open slot in work order, of a
unit they have not taken, is selected `FOR UPDATE SKIP LOCKED` (PostgreSQL): concurrent
requests never wait for each other and never pick the same row. The claim itself is a
conditional UPDATE (still open?), and a partial unique index forbids one annotator two slots
of one unit, so the result holds on SQLite too, where `select_for_update` is a no-op but
write transactions are serialised (`transaction_mode=IMMEDIATE` in settings). A lease that
runs out makes the slot open again.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Iterable, Iterator
from datetime import datetime, timedelta
from itertools import islice
from typing import Any, ClassVar

from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from apps import sql_rows as rows
from apps.annotation.kinds import Counted, Figure, Queue
from apps.annotation.models import (
    ControlItem,
    ControlServe,
    LeasedSlot,
    Skip,
    Study,
    StudyMembership,
)
from apps.annotation.services.errors import WorkRefused
from apps.annotation.services.work import Unit, Work, slot_figures

CLAIM_ATTEMPTS = 5
BATCH = 2000
#: The study-wide slot counts each work page shows are shared this long (see `queue`).
STUDY_COUNTS_SECONDS = 10


class PooledWork(Work):
    """Work handed out from k leased slots per unit (see the module docstring)."""

    slot_model: ClassVar[type[LeasedSlot]]
    skip_model: ClassVar[type[Skip]]

    def overlap(self, study: Study) -> int:
        """k: how many people answer each unit."""
        raise NotImplementedError

    def next(
        self, *, study: Study, person, now: datetime | None = None, page: bool = False
    ) -> Any | None:
        """The slot this annotator should do now, leased to them; None when no work is left
        (or the study is archived). `page`: the page's item is read with it (`page_sql`)."""
        if study.archived:
            return None
        now = now or timezone.now()
        for _ in range(CLAIM_ATTEMPTS):
            try:
                with transaction.atomic():
                    slot, settled = self._next(study, person, now, page)
            except IntegrityError:  # this annotator took a sibling slot in another session
                continue
            if settled:
                return slot
        return None

    def _next(
        self, study: Study, annotator, now: datetime, page: bool = False
    ) -> tuple[Any | None, bool]:
        """The slot (see `next`), and False when it was taken meanwhile (then again). On
        PostgreSQL two statements (`_statements`): the membership lock (a statement of its
        own, so the next one sees what a request of another tab committed meanwhile), then
        the held slot renewed, or else the first open one claimed (skipped units last), with
        what the API shows of it (`shown_sql`) or, for a page, the page's item (`page_sql`,
        as `slot.item`). On SQLite the same parts one by one (`_parts`)."""
        until = now + timedelta(minutes=study.lease_minutes)
        params = {"study": study.pk, "person": annotator.pk, "now": now, "until": until}
        columns = rows.columns(self.slot_model, "x")
        page = page and self.page_sql() is not None
        if rows.chained():
            lock, claim = _statements(self, page)
            rows.fetch(lock, params)
            found, settled = rows.fetch(claim, params), True
        else:
            found, settled = self._claimed_apart(params)
        if not found:
            return None, settled
        slot = columns.load(found[0])
        if found[0][columns.width]:  # a unit they had put back: no longer skipped
            self.skip_model._default_manager.filter(
                study=study, annotator=annotator, **self._unit_of(slot)
            ).delete()
        rest = found[0][columns.width + 1 :]
        slot.shown = rest if rest and not page and self.shown_sql() else None
        if page and rest and rest[0] is not None:
            slot.item = self.page_item(study=study, person=annotator, row=rest)
        return slot, True

    def _claimed_apart(self, params: dict[str, Any]) -> tuple[list[tuple[Any, ...]], bool]:
        """The hand-out's parts one by one (SQLite, whose write transactions are serialised):
        the held slot renewed, else the first open one claimed; False when it was taken
        between the two statements."""
        held, renew, picks, claim = _parts(self)
        found = rows.fetch(held, params)
        if found:
            return [(*row, False) for row in rows.fetch(renew, {**params, "id": found[0][0]})], True
        for skipped, pick in ((False, picks[0]), (True, picks[1])):
            found = rows.fetch(pick, params)
            if found:
                claimed = rows.fetch(claim, {**params, "id": found[0][0]})
                return [(*row, skipped) for row in claimed], bool(claimed)
        return [], True

    def shown_sql(self) -> tuple[str, str] | None:
        """What the API shows of a unit, read in the statement that hands it out: a select
        list and its tables (as `FROM got, <tables> WHERE <join>`: `got` is the slot), with
        the condition joining them; None to read it apart."""
        return None

    def page_sql(self) -> str | None:
        """The page's item statement (`item`'s, PostgreSQL), its unit given as
        `%(<unit field>)s`, `%(study)s` and `%(person)s`: read by the hand-out of a page for
        the unit handed out, its row given to `page_item`. None: `item` reads it."""
        return None

    def page_item(self, *, study: Study, person, row: Any) -> Any:
        """The page's item from a row of `page_sql`, the unit held by the person."""
        raise NotImplementedError

    def _unit_of(self, slot: Any) -> Unit:
        field = f"{self.slot_model.unit_field}_id"
        return {field: getattr(slot, field)}

    def holds(self, *, study: Study, person) -> bool:
        return self.slot_model._default_manager.filter(
            study=study, annotator=person, done_at__isnull=True
        ).exists()

    def waiting(self, *, study: Study, person, now: datetime) -> bool:
        params = {"study": study.pk, "person": person.pk, "now": now}
        return bool(rows.fetch(_parts(self)[2][2], params))

    def slots_of(self, *, study: Study, person) -> QuerySet[Any]:
        return self.slot_model._default_manager.filter(study=study, annotator=person)

    def skip(self, *, study: Study, person, unit: Unit) -> None:
        """Put the unit back: the slot opens for others; this annotator sees it again last.
        A unit they do not hold is left as it is (nothing to put back)."""
        with transaction.atomic():
            released = self.slot_model._default_manager.filter(
                study=study, annotator=person, done_at__isnull=True, **unit
            ).update(annotator=None, leased_until=None)
            if released:
                self.skip_model._default_manager.update_or_create(
                    study=study, annotator=person, **unit
                )

    def slot_figures(self, study: Study) -> list[Figure]:
        slots = self.slot_model._default_manager.filter(study=study)
        return slot_figures(slots, self.slug, self.name)

    def release(self, *, study: Study, person) -> None:
        self.slot_model._default_manager.filter(
            study=study, annotator=person, done_at__isnull=True
        ).update(annotator=None, leased_until=None)

    def closing(self) -> type[LeasedSlot]:
        return self.slot_model

    def close(
        self,
        *,
        study: Study,
        person,
        unit: Unit,
        revisit: bool,
        closed: tuple[Any | None] | None = None,
    ) -> None:
        """Mark this annotator's slot of the unit done (inside the saving transaction).

        An answer already saved (`revisit`) just changes. An annotator whose lease ran out
        and whose slot went to someone else may still submit: they take another open slot of
        the unit if there is one, else the answer is kept as an extra one, never dropped.
        Anyone else, for a unit they were never handed, is refused.
        """
        if closed is not None and closed[0] is not None:
            return  # closed now or before, by the save's first read (`closing`)
        now = timezone.now()
        if closed is None and rows.fetch(
            _close_sql(self.slot_model, tuple(unit)), [now, study.pk, person.pk, *unit.values()]
        ):
            return  # the usual case, in a statement written once
        slots = self.slot_model._default_manager.filter(study=study, **unit)
        mine = slots.filter(annotator=person)
        if mine.filter(done_at__isnull=True).update(done_at=now) or mine.exists() or revisit:
            return  # closed now, closed before, or a change of an earlier answer
        if not slots.filter(lapsed_annotator=person).exists():
            raise WorkRefused("This item is not assigned to you.")
        free = (
            slots.select_for_update(skip_locked=True)
            .filter(done_at__isnull=True)
            .filter(Q(annotator__isnull=True) | Q(leased_until__lt=now))
            .order_by("slot")
            .first()
        )
        if free is not None and _claim(free, person, now, now):
            slots.filter(pk=free.pk).update(done_at=now)

    def may_open(self, *, study: Study, person, unit: Unit) -> tuple[bool, Any | None]:
        """(holds an open slot of the unit, their answer on it): a page shows the unit only
        when one of them is there."""
        mine = {"study": study, "annotator": person, **unit}
        held = self.slot_model._default_manager.filter(**mine, done_at__isnull=True).exists()
        return held, self.model._default_manager.filter(**mine).first()

    def slots_sync(self, *, study: Study, units: QuerySet[Any], key: str) -> int:
        """k slots per unit of `units` (rows with `position`; `key` names the unit's id in
        them); surplus slots (k was lowered) go if nobody holds them. Returns the number of
        slots."""
        k = self.overlap(study)
        field = f"{self.slot_model.unit_field}_id"
        slots = self.slot_model._default_manager.filter(study=study)
        now = timezone.now()
        slots.filter(slot__gte=k, done_at__isnull=True).filter(
            Q(annotator__isnull=True) | Q(leased_until__lt=now)
        ).delete()
        full = (
            slots.filter(slot__lt=k)
            .values(field)
            .annotate(n=Count("id"))
            .filter(n=k)
            .values_list(field, flat=True)
        )
        missing = units.exclude(**{f"{key}__in": full}).values_list(key, "position")
        for chunk in batched(missing.iterator()):
            have = set(
                slots.filter(**{f"{field}__in": [u for u, _ in chunk]}).values_list(field, "slot")
            )
            self.slot_model._default_manager.bulk_create(
                self.slot_model(study=study, slot=s, position=pos, **{field: u})
                for u, pos in chunk
                for s in range(k)
                if (u, s) not in have
            )
        return slots.count()

    def queue(
        self, *, study: Study, person, fresh: bool = False, counted: Counted | None = None
    ) -> Queue:
        """Their answers, and the study's open and total slots. The study-wide counts scan
        every slot, so they are shared for `STUDY_COUNTS_SECONDS`; the person's own answers
        since then are taken off the open slots, so their count moves with each of their
        saves (others' show within the interval). `fresh` counts now: beside "Nothing left",
        stale counts would contradict the message."""
        key = f"annotation:{self.slug}-slots:{study.pk}"
        mine_key = f"{key}:{person.pk}"
        done = counted[0] if counted else self.mine(study, person).count()
        got = {} if fresh else cache.get_many([key, mine_key])
        counts = got.get(key)
        if counts is None:
            counts = self.slot_model._default_manager.filter(study=study).aggregate(
                total=Count("id"), open=Count("id", filter=Q(done_at__isnull=True))
            )
            counts["at"] = uuid.uuid4().hex
            cache.set(key, counts, STUDY_COUNTS_SECONDS)
        since = got.get(mine_key)  # (the counts it applies to, the person's answers then)
        if since is None or since[0] != counts["at"]:
            since = (counts["at"], done)
            cache.set(mine_key, since, STUDY_COUNTS_SECONDS)
        still_open = max(0, counts["open"] - (done - since[1]))
        return Queue(done=done, open=still_open, total=counts["total"])


@functools.cache
def _parts(work: PooledWork) -> tuple[str, str, tuple[str, str, str], str]:
    """The statements of a hand-out of pooled work, written once: the person's held slot;
    it renewed (`%(id)s`); the first open slot they may take (skipped units excluded, then
    included, then included and not locked: "is any left?"); it claimed (`%(id)s`, if it is
    still open). `_statements` joins them into one on PostgreSQL."""
    slots, unit = rows.table(work.slot_model), f'"{work.slot_model.unit_field}_id"'
    answers = rows.table(work.model)
    person = f'"{work.model.person_field}_id"'
    skips, serves = rows.table(work.skip_model), rows.table(ControlServe)
    controls = rows.table(ControlItem)
    returned = rows.columns(work.slot_model, "x").sql.replace('x."', '"')
    # Each NOT EXISTS is fenced (OFFSET 0): PostgreSQL then probes the unique index once per
    # candidate slot, instead of turning it into an anti-join that reads every slot and
    # answer the person ever had (a cost growing with their history; and with the
    # statistics of a fresh plan, which say no slot has an annotator, the planner picked
    # that). docs/annotation.md, "Speed".
    fence = rows.FENCE

    def pick(with_skipped: bool, lock: bool = True) -> str:
        skipped = (
            ""
            if with_skipped
            else f"AND NOT EXISTS (SELECT 1 FROM {skips} k WHERE k.study_id = %(study)s "
            f"AND k.{unit} = o.{unit} AND k.annotator_id = %(person)s{fence}) "
        )
        return (
            f"SELECT o.id FROM {slots} o WHERE o.study_id = %(study)s AND o.done_at IS NULL "
            "AND (o.annotator_id IS NULL OR o.leased_until < %(now)s) "
            f"AND NOT EXISTS (SELECT 1 FROM {slots} m WHERE m.study_id = %(study)s "
            f"AND m.{unit} = o.{unit} AND m.annotator_id = %(person)s{fence}) "
            f"AND NOT EXISTS (SELECT 1 FROM {answers} j WHERE j.study_id = %(study)s "
            f"AND j.{unit} = o.{unit} AND j.{person} = %(person)s{fence}) "
            f"AND NOT EXISTS (SELECT 1 FROM {serves} c JOIN {controls} ci "
            "ON ci.id = c.control_id WHERE c.study_id = %(study)s "
            f"AND c.annotator_id = %(person)s AND ci.{unit} = o.{unit}{fence}) "
            f"{skipped}ORDER BY o.position, o.slot LIMIT 1"
            + (" FOR UPDATE OF o SKIP LOCKED" if lock else "")
        )

    # The held slot: the first in the partial index of held slots (annotator, study,
    # position, slot), which gives the order, so the planner takes it at any statistics; not
    # the study's queue walked in order for the first slot that is theirs (29 ms when they
    # held none), nor every slot they ever had. docs/annotation.md, "Speed".
    held = (
        f"SELECT id FROM {slots} WHERE study_id = %(study)s AND annotator_id = %(person)s "
        "AND done_at IS NULL ORDER BY position, slot LIMIT 1 FOR UPDATE"
    )
    renew = f"UPDATE {slots} SET leased_until = %(until)s WHERE id = %(id)s RETURNING {returned}"
    claim = (
        f"UPDATE {slots} SET annotator_id = %(person)s, leased_until = %(until)s, "
        "lapsed_annotator_id = COALESCE(annotator_id, lapsed_annotator_id) "
        "WHERE id = %(id)s AND done_at IS NULL "
        f"AND (annotator_id IS NULL OR leased_until < %(now)s) RETURNING {returned}"
    )
    return held, renew, (pick(False), pick(True), pick(True, lock=False)), claim


@functools.cache
def _statements(work: PooledWork, page: bool = False) -> tuple[str, str]:
    """The membership lock, and `_parts` as one statement: the held slot renewed, or else
    the first open one claimed, reading what the API shows of the unit or (`page`) the
    page's item (PostgreSQL)."""
    held, renew, (first, again, _), claim = _parts(work)
    lock = (
        f"SELECT 1 FROM {rows.table(StudyMembership)} "
        "WHERE study_id = %(study)s AND user_id = %(person)s FOR UPDATE"
    )
    renewed = renew.replace("id = %(id)s", "id IN (SELECT id FROM held)")
    claimed, returned = claim.replace("id = %(id)s", "id IN (SELECT id FROM chosen)").split(
        " RETURNING "
    )
    statement = (
        f"WITH held AS ({held}), "
        f"renewed AS ({renewed}, false AS skipped), "
        f"first AS ({first}), "
        f"again AS ({again}), "
        "chosen AS (SELECT id, false AS skipped FROM first UNION ALL "
        "SELECT id, true FROM again WHERE NOT EXISTS (SELECT 1 FROM first)), "
        f"claimed AS ({claimed} AND NOT EXISTS (SELECT 1 FROM held) "
        f"RETURNING {returned}, (SELECT skipped FROM chosen)), "
        "got AS (SELECT * FROM renewed UNION ALL SELECT * FROM claimed) "
    )
    shown = work.shown_sql()
    item = work.page_sql() if page else None
    if item is not None:  # the item's statement, of the unit handed out
        # OFFSET 0: planned as a statement of its own, not merged into the hand-out's joins
        # (which doubled the whole statement's planning, 2.6 against 1.35 ms: it is planned
        # again whenever psycopg drops its prepared statements, after any rollback).
        field = work.slot_model.unit_field
        item = item.replace(f"%({field})s", f"got.{field}_id")
        statement += (
            f"SELECT got.*, item.* FROM got LEFT JOIN LATERAL ({item} OFFSET 0) item ON true"
        )
    elif shown is None:
        statement += "SELECT * FROM got"
    else:
        select, tables = shown
        statement += f"SELECT got.*, {select} FROM got, {tables}"
    return lock, statement


@functools.cache
def _close_sql(slot_model: type[LeasedSlot], unit: tuple[str, ...]) -> str:
    where = " AND ".join(f'"{name}" = %s' for name in ("study_id", "annotator_id", *unit))
    return (
        f"UPDATE {rows.table(slot_model)} SET done_at = %s "
        f"WHERE {where} AND done_at IS NULL RETURNING id"
    )


def _claim(slot: Any, annotator, now: datetime, until: datetime) -> bool:
    """Compare-and-set: the slot becomes this annotator's only if it is still open."""
    lapsed = slot.annotator_id or slot.lapsed_annotator_id
    claimed = (
        type(slot)
        ._default_manager.filter(pk=slot.pk, done_at__isnull=True)
        .filter(Q(annotator__isnull=True) | Q(leased_until__lt=now))
        .update(annotator=annotator, leased_until=until, lapsed_annotator_id=lapsed)
    )
    slot.annotator, slot.leased_until, slot.lapsed_annotator_id = annotator, until, lapsed
    return claimed == 1


def batched(rows: Iterable[tuple[int, int]], size: int = BATCH) -> Iterator[list[tuple[int, int]]]:
    it = iter(rows)
    while chunk := list(islice(it, size)):
        yield chunk
