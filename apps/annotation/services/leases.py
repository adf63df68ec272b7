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
from collections.abc import Iterable, Iterator
from datetime import datetime, timedelta
from itertools import islice
from typing import Any, ClassVar

from django.db import IntegrityError, transaction
from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from apps import handout_sql
from apps import sql_rows as rows
from apps.annotation.models import (
    ControlItem,
    ControlServe,
    LeasedSlot,
    Skip,
    Study,
    StudyMembership,
)
from apps.annotation.services.errors import WorkRefused
from apps.annotation.services.work import Unit, Work
from apps.handout_sql import Page, Pool, Shown

CLAIM_ATTEMPTS = 5
BATCH = 2000


class PooledWork(Work):
    """Work handed out from k leased slots per unit (see the module docstring)."""

    slot_model: ClassVar[type[LeasedSlot]]
    skip_model: ClassVar[type[Skip]]
    #: What the API shows of a unit, read by the statement that hands it out (else apart).
    api_item: ClassVar[Shown | None] = None
    #: The page's item, read by a page's hand-out (else `item` reads it).
    page_item: ClassVar[Page | None] = None

    def overlap(self, study: Study) -> int:
        """k: how many people answer each unit."""
        raise NotImplementedError

    def next(
        self, *, study: Study, person, now: datetime | None = None, page: bool = False
    ) -> Any | None:
        """The slot this annotator should do now, leased to them; None when no work is left
        (or the study is archived). `page`: the page's item is read with it (`page_item`)."""
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
        PostgreSQL two statements (handout_sql.statements): the membership lock (a statement
        of its own, so the next one sees what a request of another tab committed meanwhile),
        then the held slot renewed, or else the first open one claimed (skipped units last),
        with what the API shows of it (`api_item`) or, for a page, the page's item
        (`page_item`, as `slot.item`). On SQLite the same parts one by one."""
        until = now + timedelta(minutes=study.lease_minutes)
        params = {"study": study.pk, "person": annotator.pk, "now": now, "until": until}
        columns = rows.columns(self.slot_model, "x")
        read = self.page_item if page else None
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
        if rest and rest[0] is not None:  # what the API shows, or the page's item
            if read is None:
                slot.shown = rest
            else:
                slot.item = read.item(study, annotator, rest)
        return slot, True

    def _claimed_apart(self, params: dict[str, Any]) -> tuple[list[tuple[Any, ...]], bool]:
        """The hand-out's parts one by one (SQLite, whose write transactions are serialised):
        the held slot renewed, else the first open one claimed; False when it was taken
        between the two statements."""
        held, renew, picks, claim = handout_sql.parts(_pool(self))
        found = rows.fetch(held, params)
        if found:
            return [(*row, False) for row in rows.fetch(renew, {**params, "id": found[0][0]})], True
        for skipped, pick in ((False, picks[0]), (True, picks[1])):
            found = rows.fetch(pick, params)
            if found:
                claimed = rows.fetch(claim, {**params, "id": found[0][0]})
                return [(*row, skipped) for row in claimed], bool(claimed)
        return [], True

    def _unit_of(self, slot: Any) -> Unit:
        field = f"{self.slot_model.unit_field}_id"
        return {field: getattr(slot, field)}

    def holds(self, *, study: Study, person) -> bool:
        return self.slot_model._default_manager.filter(
            study=study, annotator=person, done_at__isnull=True
        ).exists()

    def waiting(self, *, study: Study, person, now: datetime) -> bool:
        params = {"study": study.pk, "person": person.pk, "now": now}
        return bool(rows.fetch(handout_sql.parts(_pool(self))[2][2], params))

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

    def release(self, *, study: Study, person) -> None:
        self.slot_model._default_manager.filter(
            study=study, annotator=person, done_at__isnull=True
        ).update(annotator=None, leased_until=None)

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
            return  # closed now or before, by the save's first read (`slot_model`)
        now = timezone.now()
        if closed is None and rows.fetch(
            handout_sql.close_sql(self.slot_model, tuple(unit)),
            [now, study.pk, person.pk, *unit.values()],
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


@functools.cache
def _pool(work: PooledWork) -> Pool:
    """The tables of the work's hand-out (handout_sql.py builds its statements)."""
    return Pool(
        work.slot_model,
        work.model,
        work.model.person_field,
        work.skip_model,
        ControlServe,
        ControlItem,
        StudyMembership,
    )


def _statements(work: PooledWork, page: bool = False) -> tuple[str, str]:
    """The hand-out's two statements (PostgreSQL), with what the API shows of the unit or,
    for a page, the page's item."""
    return handout_sql.statements(_pool(work), work.api_item, work.page_item if page else None)


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
