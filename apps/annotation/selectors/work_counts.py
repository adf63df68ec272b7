"""What is read of a kind of work's progress: a person's queue and answers, the researcher's
figures, who answered how much, what agreement compares. Over a kind's declarations (its
judgement `model`, its `slot_model`: none, owned by one annotator, or leased `LeasedSlot`s),
so every kind is counted the same way without a method of its own.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.core.cache import cache
from django.db.models import Count, Max, Q, QuerySet
from django.utils import timezone

from apps.annotation.models import LeasedSlot, Study
from apps.annotation.selectors.shown import QUEUE_SHOWN_UP_TO

#: A person's answers and units waiting for them, already counted.
Counted = tuple[int, int]
#: How many of a person's last answers their page lists ("Your last verdicts").
RECENT = 8
#: The study-wide slot counts each work page shows are shared this long (see `queue`).
STUDY_COUNTS_SECONDS = 10


@dataclass(frozen=True)
class Queue:
    """What a person sees of one type of work: what they did, what waits for them, and the
    study's open and total units (pooled work)."""

    done: int = 0
    mine: int = 0
    open: int = 0
    total: int = 0

    @property
    def mine_shown(self) -> str:
        """`mine` as a page shows it: counted up to `QUEUE_SHOWN_UP_TO` + 1 ("1000+")."""
        return f"{QUEUE_SHOWN_UP_TO}+" if self.mine > QUEUE_SHOWN_UP_TO else str(self.mine)


@dataclass(frozen=True)
class Figure:
    """One count of the researcher's progress page: `key` names it in the API (and
    `total_key` its total, if it has one), `id` on the page."""

    key: str
    label: str
    value: int
    id: str
    total: int | None = None
    total_key: str = ""


def _pooled(work: Any) -> bool:
    return work.slot_model is not None and issubclass(work.slot_model, LeasedSlot)


def answers_of(work: Any, study: Study, person) -> QuerySet[Any]:
    """The person's answers, a control item's too (what they see of their own work)."""
    return work.model.answers.filter(study=study, **{work.model.person_field: person})


def recent(work: Any, *, study: Study, person) -> list[Any]:
    """The person's last answers, latest first: the list a page loads when they open it
    (not with every unit: docs/annotation.md, "Speed")."""
    latest = answers_of(work, study, person).select_related(*work.recent_related)
    return list(latest.order_by("-created_at", "-id")[:RECENT])


def queue(
    work: Any, *, study: Study, person, fresh: bool = False, counted: Counted | None = None
) -> Queue:
    """What the person sees of the work; `counted`: their counts, when the caller read them
    already. Slots of their own: how many wait for them; pooled slots: `_pooled_queue`."""
    if work.slot_model is None:
        return Queue(done=counted[0] if counted else answers_of(work, study, person).count())
    if _pooled(work):
        return _pooled_queue(work, study=study, person=person, fresh=fresh, counted=counted)
    if counted:
        return Queue(done=counted[0], mine=counted[1])
    waiting = work.slot_model._default_manager.filter(
        study=study, annotator=person, done_at__isnull=True
    )[: QUEUE_SHOWN_UP_TO + 1].count()
    return Queue(done=answers_of(work, study, person).count(), mine=waiting)


def _pooled_queue(
    work: Any, *, study: Study, person, fresh: bool, counted: Counted | None
) -> Queue:
    """Their answers, and the study's open and total slots. The study-wide counts scan
    every slot, so they are shared for `STUDY_COUNTS_SECONDS`; the person's own answers
    since then are taken off the open slots, so their count moves with each of their
    saves (others' show within the interval). `fresh` counts now: beside "Nothing left",
    stale counts would contradict the message."""
    key = f"annotation:{work.slug}-slots:{study.pk}"
    mine_key = f"{key}:{person.pk}"
    done = counted[0] if counted else answers_of(work, study, person).count()
    got = {} if fresh else cache.get_many([key, mine_key])
    counts = got.get(key)
    if counts is None:
        counts = work.slot_model._default_manager.filter(study=study).aggregate(
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


def figures(work: Any, study: Study, answers: int) -> list[Figure]:
    """The counts of the researcher's progress page: `answers` (counted by the caller,
    from `done_by`), then the slots': done of total, and (pooled) held now."""
    key, label, id = work.answers_figure
    return [Figure(key, label, answers, id), *_slot_figures(work, study)]


def _slot_figures(work: Any, study: Study) -> list[Figure]:
    if work.slot_model is None:
        return []
    slots = work.slot_model._default_manager.filter(study=study)
    pooled = _pooled(work)
    now = timezone.now()
    counts = slots.aggregate(
        n=Count("id"),
        done=Count("id", filter=Q(done_at__isnull=False)),
        **(
            {"held": Count("id", filter=Q(done_at__isnull=True, leased_until__gte=now))}
            if pooled
            else {}
        ),
    )
    prefix, label = work.slug, work.name
    done = Figure(
        f"{prefix}_done",
        f"{label} slots done",
        counts["done"],
        f"{prefix}-done",
        total=counts["n"],
        total_key=f"{prefix}_slots",
    )
    if not pooled:
        return [done]
    held = Figure(f"{prefix}_leased", f"{label} slots held now", counts["held"], f"{prefix}-leased")
    return [done, held]


def done_by(work: Any, study: Study) -> dict[int, tuple[int, datetime | None]]:
    """{person id: (answers, last saved)} in one query."""
    person = f"{work.model.person_field}_id"
    found = (
        work.model._default_manager.filter(study=study)
        .values_list(person)
        .annotate(n=Count("id"), last=Max("updated_at"))
        .order_by()
    )
    return {user_id: (n, last) for user_id, n, last in found}


def agreement_rows(work: Any, study: Study) -> list[tuple[tuple, int, Any]]:
    """(unit, person, value) of every answer: what agreement statistics compare (none for
    a kind whose answers are not compared so: best-worst, by split-half reliability)."""
    if not work.agreement:
        return []
    model = work.model
    units = [f"{name}_id" for name in model.unit_fields]
    found = model._default_manager.filter(study=study).values_list(
        *units, f"{model.person_field}_id", model.value_field
    )
    return [((work.slug, *row[:-2]), row[-2], row[-1]) for row in found]
