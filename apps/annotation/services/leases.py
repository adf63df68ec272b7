"""Handing out vetting work: "next item", skip, and closing a slot when a vetting is saved.

How "next item" stays correct under load: a perturbation needing k vettings has exactly k
`VettingSlot` rows. An annotator first gets back a slot they already hold, with the lease
renewed (requests of one annotator, e.g. from two tabs, queue on their membership row).
Otherwise the first open slot in work order, of a perturbation they have not taken, is selected
`FOR UPDATE SKIP LOCKED` (PostgreSQL): concurrent requests never wait for each other and never
pick the same row. The claim itself is a conditional UPDATE (still open?), and a partial unique
index forbids one annotator two slots of one perturbation, so the result holds on SQLite too,
where `select_for_update` is a no-op but write transactions are serialised
(`transaction_mode=IMMEDIATE` in settings). A lease that runs out makes the slot open again.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.utils import timezone

from apps.annotation.models import Study, StudyMembership, Vetting, VettingSkip, VettingSlot
from apps.annotation.services.errors import WorkRefused

CLAIM_ATTEMPTS = 5


def vetting_next(*, study: Study, annotator, now: datetime | None = None) -> VettingSlot | None:
    """The slot this annotator should vet now, leased to them; None when no work is left (or
    the study is archived)."""
    if study.archived:
        return None
    now = now or timezone.now()
    for _ in range(CLAIM_ATTEMPTS):
        try:
            with transaction.atomic():
                slot, settled = _next(study, annotator, now)
        except IntegrityError:  # this annotator took a sibling slot in another session
            continue
        if settled:
            return slot
    return None


def _next(study: Study, annotator, now: datetime) -> tuple[VettingSlot | None, bool]:
    until = now + timedelta(minutes=study.lease_minutes)
    # One request per annotator at a time (two tabs): the second then finds the first's item.
    list(StudyMembership.objects.select_for_update().filter(study=study, user=annotator))
    held = (
        VettingSlot.objects.select_for_update()
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
            open_slots(study=study, annotator=annotator, now=now, with_skipped=with_skipped)
            .select_for_update(skip_locked=True, of=("self",))
            .first()
        )
        if slot is None:
            continue
        if not _claim(slot, annotator, now, until):
            return None, False  # taken between the select and the claim (SQLite): try again
        if with_skipped:
            VettingSkip.objects.filter(
                study=study, annotator=annotator, perturbation_id=slot.perturbation_id
            ).delete()
        return slot, True
    return None, True


def open_slots(
    *, study: Study, annotator, now: datetime, with_skipped: bool = False
) -> QuerySet[VettingSlot]:
    """Slots this annotator could take, in work order."""
    same_item = {"study": study, "perturbation": OuterRef("perturbation"), "annotator": annotator}
    slots = (
        VettingSlot.objects.filter(study=study, done_at__isnull=True)
        .filter(Q(annotator__isnull=True) | Q(leased_until__lt=now))
        .exclude(Exists(VettingSlot.objects.filter(**same_item)))
        .exclude(Exists(Vetting.objects.filter(**same_item)))
    )
    if not with_skipped:
        slots = slots.exclude(Exists(VettingSkip.objects.filter(**same_item)))
    return slots.order_by("position", "slot")


def _claim(slot: VettingSlot, annotator, now: datetime, until: datetime) -> bool:
    """Compare-and-set: the slot becomes this annotator's only if it is still open."""
    lapsed = slot.annotator_id or slot.lapsed_annotator_id
    claimed = (
        VettingSlot.objects.filter(pk=slot.pk, done_at__isnull=True)
        .filter(Q(annotator__isnull=True) | Q(leased_until__lt=now))
        .update(annotator=annotator, leased_until=until, lapsed_annotator_id=lapsed)
    )
    slot.annotator, slot.leased_until, slot.lapsed_annotator_id = annotator, until, lapsed
    return claimed == 1


@transaction.atomic
def vetting_skip(*, study: Study, annotator, perturbation_id: int) -> None:
    """Put the item back: the slot opens for others; this annotator sees it again last."""
    VettingSlot.objects.filter(
        study=study, perturbation_id=perturbation_id, annotator=annotator, done_at__isnull=True
    ).update(annotator=None, leased_until=None)
    VettingSkip.objects.update_or_create(
        study=study, annotator=annotator, perturbation_id=perturbation_id
    )


def vetting_slot_close(*, study: Study, annotator, perturbation_id: int, revisit: bool) -> None:
    """Mark this annotator's slot of the perturbation done (inside the saving transaction).

    A vetting already saved (`revisit`) just changes. An annotator whose lease ran out and whose
    slot went to someone else may still submit: they take another open slot of the item if
    there is one, else the vetting is kept as an extra one, never dropped. Anyone else, for
    an item they were never handed, is refused.
    """
    now = timezone.now()
    mine = VettingSlot.objects.filter(
        study=study, perturbation_id=perturbation_id, annotator=annotator
    )
    if mine.filter(done_at__isnull=True).update(done_at=now) or mine.exists() or revisit:
        return  # closed now, closed before, or a change of an earlier verdict
    lapsed = VettingSlot.objects.filter(
        study=study, perturbation_id=perturbation_id, lapsed_annotator=annotator
    ).exists()
    if not lapsed:
        raise WorkRefused("This item is not assigned to you.")
    free = (
        VettingSlot.objects.select_for_update(skip_locked=True)
        .filter(study=study, perturbation_id=perturbation_id, done_at__isnull=True)
        .filter(Q(annotator__isnull=True) | Q(leased_until__lt=now))
        .order_by("slot")
        .first()
    )
    if free is not None and _claim(free, annotator, now, now):
        VettingSlot.objects.filter(pk=free.pk).update(done_at=now)
