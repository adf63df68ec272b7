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

from collections.abc import Iterable, Iterator
from datetime import datetime, timedelta
from itertools import islice
from typing import Any, ClassVar

from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.db.models import Count, Exists, OuterRef, Q, QuerySet
from django.utils import timezone

from apps.annotation.models import ControlServe, LeasedSlot, Skip, Study, StudyMembership
from apps.annotation.services.errors import WorkRefused
from apps.annotation.services.work import Figure, Queue, Unit, Work, slot_figures

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

    def next(self, *, study: Study, person, now: datetime | None = None) -> Any | None:
        """The slot this annotator should do now, leased to them; None when no work is left
        (or the study is archived)."""
        if study.archived:
            return None
        now = now or timezone.now()
        for _ in range(CLAIM_ATTEMPTS):
            try:
                with transaction.atomic():
                    slot, settled = self._next(study, person, now)
            except IntegrityError:  # this annotator took a sibling slot in another session
                continue
            if settled:
                return slot
        return None

    def _next(self, study: Study, annotator, now: datetime) -> tuple[Any | None, bool]:
        until = now + timedelta(minutes=study.lease_minutes)
        # One request per annotator at a time (two tabs): the second then finds the first's.
        list(StudyMembership.objects.select_for_update().filter(study=study, user=annotator))
        held = (
            self.slot_model._default_manager.select_for_update()
            .filter(study=study, annotator=annotator, done_at__isnull=True)
            .order_by("position", "slot")
            .first()
        )
        if held is not None:
            held.leased_until = until
            held.save(update_fields=["leased_until"])
            return held, True
        for with_skipped in (False, True):
            slot = (
                self.open_slots(
                    study=study, annotator=annotator, now=now, with_skipped=with_skipped
                )
                .select_for_update(skip_locked=True, of=("self",))
                .first()
            )
            if slot is None:
                continue
            if not _claim(slot, annotator, now, until):
                return None, False  # taken between the select and the claim (SQLite): again
            if with_skipped:
                self.skip_model._default_manager.filter(
                    study=study, annotator=annotator, **self._unit_of(slot)
                ).delete()
            return slot, True
        return None, True

    def _unit_of(self, slot: Any) -> Unit:
        field = f"{self.slot_model.unit_field}_id"
        return {field: getattr(slot, field)}

    def open_slots(
        self, *, study: Study, annotator, now: datetime, with_skipped: bool = False
    ) -> QuerySet[Any]:
        """Slots this annotator could take, in work order."""
        field = self.slot_model.unit_field
        same_unit = {"study": study, field: OuterRef(field), "annotator": annotator}
        # Not a unit they met as a control item (served, or answered).
        control = {"study": study, f"control__{field}": OuterRef(field), "annotator": annotator}
        slots = (
            self.slot_model._default_manager.filter(study=study, done_at__isnull=True)
            .filter(Q(annotator__isnull=True) | Q(leased_until__lt=now))
            .exclude(Exists(self.slot_model._default_manager.filter(**same_unit)))
            .exclude(Exists(self.model.answers.filter(**same_unit)))
            .exclude(Exists(ControlServe.objects.filter(**control)))
        )
        if not with_skipped:
            slots = slots.exclude(Exists(self.skip_model._default_manager.filter(**same_unit)))
        return slots.order_by("position", "slot")

    def holds(self, *, study: Study, person) -> bool:
        return self.slot_model._default_manager.filter(
            study=study, annotator=person, done_at__isnull=True
        ).exists()

    def waiting(self, *, study: Study, person, now: datetime) -> bool:
        return self.open_slots(study=study, annotator=person, now=now, with_skipped=True).exists()

    def slots_of(self, *, study: Study, person) -> QuerySet[Any]:
        return self.slot_model._default_manager.filter(study=study, annotator=person)

    def skip(self, *, study: Study, person, unit: Unit) -> None:
        """Put the unit back: the slot opens for others; this annotator sees it again last."""
        with transaction.atomic():
            self.slot_model._default_manager.filter(
                study=study, annotator=person, done_at__isnull=True, **unit
            ).update(annotator=None, leased_until=None)
            self.skip_model._default_manager.update_or_create(study=study, annotator=person, **unit)

    def slot_figures(self, study: Study) -> list[Figure]:
        slots = self.slot_model._default_manager.filter(study=study)
        return slot_figures(slots, self.slug, self.name)

    def release(self, *, study: Study, person) -> None:
        self.slot_model._default_manager.filter(
            study=study, annotator=person, done_at__isnull=True
        ).update(annotator=None, leased_until=None)

    def close(self, *, study: Study, person, unit: Unit, revisit: bool) -> None:
        """Mark this annotator's slot of the unit done (inside the saving transaction).

        An answer already saved (`revisit`) just changes. An annotator whose lease ran out
        and whose slot went to someone else may still submit: they take another open slot of
        the unit if there is one, else the answer is kept as an extra one, never dropped.
        Anyone else, for a unit they were never handed, is refused.
        """
        now = timezone.now()
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

    def queue(self, *, study: Study, person, fresh: bool = False) -> Queue:
        """Their answers, and the study's open and total slots. The study-wide counts scan
        every slot, so they are shared for `STUDY_COUNTS_SECONDS` (each page shows them; a
        few seconds' staleness does not matter there). `fresh` counts now: beside "Nothing
        left", stale counts would contradict the message."""
        key = f"annotation:{self.slug}-slots:{study.pk}"
        counts = None if fresh else cache.get(key)
        if counts is None:
            counts = self.slot_model._default_manager.filter(study=study).aggregate(
                total=Count("id"), open=Count("id", filter=Q(done_at__isnull=True))
            )
            cache.set(key, counts, STUDY_COUNTS_SECONDS)
        return Queue(
            done=self.mine(study, person).count(), open=counts["open"], total=counts["total"]
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
