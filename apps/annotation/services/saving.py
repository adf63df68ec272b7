"""Saving a judgement exactly once.

Every submit carries an idempotency key, stored (unique) on the `JudgementChange` the save
writes. `submit_once` answers a key it has seen with the judgement saved the first time; two
requests racing with the same key meet at the unique constraint and the loser is answered the
same way. `locked_or_created` is get-or-create under a row lock, so two sessions saving the
same judgement (different keys) end with one row, the later save updating it.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from django.db import IntegrityError, models, transaction

from apps import sql_rows as rows
from apps.annotation.models import Judgement, JudgementChange
from apps.annotation.services.errors import KeyReused, StaleJudgement
from apps.answer_sql import Repeated, key_seen

M = TypeVar("M", bound=models.Model)


#: Whether a key was used (`Repeated`, from apps/answer_sql.py, is raised inside `save` when
#: its own read found it used: see `submit_once`).
KEY_SEEN = key_seen(JudgementChange)


def submit_once(
    *,
    key: uuid.UUID,
    user,
    judgement: str,
    answer: Mapping[str, Any],
    save: Callable[[], JudgementChange],
    asked_in_save: bool = False,
) -> tuple[JudgementChange, bool]:
    """Run `save` (which records a JudgementChange carrying `key`) unless `key` was seen.

    Returns the change and whether it is new. A key seen with a different `answer` (what was
    submitted, as stored in the change's `after` plus the judged object's ids in `target`) is
    refused with KeyReused (409), never answered as if the new answer had been saved. Not
    wrapped in @transaction.atomic on purpose: the unique-key violation of a racing duplicate
    must roll back only the inner block. `asked_in_save`: `save` looks the key up itself, in
    a statement it sends anyway, and raises Repeated when it was seen (one statement less).
    """
    if not asked_in_save:
        seen = _seen(key, user, judgement, answer)
        if seen is not None:
            return seen, False
    try:
        with transaction.atomic():
            return save(), True
    except (IntegrityError, Repeated, StaleJudgement) as refused:  # stale: same key, at once
        seen = _seen(key, user, judgement, answer, known=isinstance(refused, Repeated))
        if seen is None:
            raise
        return seen, False


def _seen(
    key: uuid.UUID, user, judgement: str, answer: Mapping[str, Any], known: bool = False
) -> JudgementChange | None:
    """The change that used `key`, if any (`known`: it was found already)."""
    if not known and not rows.fetch(KEY_SEEN, [key]):
        return None  # the usual case, in a statement written once
    change = JudgementChange.objects.filter(idempotency_key=key).first()
    if change is None:
        return None
    if change.user_id != user.pk or change.judgement != judgement:
        raise KeyReused("this idempotency key was used for another judgement")
    if any(change.after.get(name, value) != value for name, value in answer.items()):
        raise KeyReused(
            "this idempotency key was already used for a different answer; the first answer "
            "is kept (send a new key to change it)"
        )
    return change


def locked_or_created(
    model: type[M],
    *,
    lookup: dict[str, Any],
    values: dict[str, Any],
    fields: tuple[str, ...],
    locked: M | None = None,
    looked_up: bool = False,
) -> tuple[M, dict[str, Any] | None]:
    """The row matching `lookup`, locked and updated with `values`, or a new one.

    `locked` is the row when the caller already fetched it `select_for_update` (`looked_up`:
    the caller looked, and there was none). Returns the row and its `fields` before the
    update (None when it was created). Must run inside a transaction.
    """
    every = model._base_manager  # every row (a judgement's default manager hides controls')
    row = locked
    if row is None and not looked_up:
        row = every.select_for_update().filter(**lookup).first()
    if row is None:
        # One statement, no savepoint: a row a concurrent request created meanwhile is left
        # alone by the insert, then updated below.
        new = model(**lookup, **values)
        if rows.insert(new, unless_conflict=True):
            return new, None
        row = every.select_for_update().get(**lookup)
    before = snapshot(row, fields)
    for name, value in values.items():
        setattr(row, name, value)
    row.save()
    return row, before


def created_with_change(
    model: type[Judgement],
    *,
    values: dict[str, Any],
    fields: tuple[str, ...],
    user,
    key: uuid.UUID,
    extra: tuple[str, Sequence[Any]] | None = None,
    active_seconds: float | None = None,
) -> tuple[JudgementChange, Any] | None:
    """A new judgement with `values` and the change recording it, inserted in one statement
    (PostgreSQL); None, and nothing inserted, when the judgement was created meanwhile by a
    concurrent request (`locked_or_created` then updates that one). Returns the change and
    the value of `extra` (rows.insert_pair)."""
    row = model(**values)
    after = snapshot(row, fields)
    change = JudgementChange.of(
        row, user=user, key=key, before=None, after=after, active_seconds=active_seconds
    )
    link = f"{row.change_field}_id"
    inserted = rows.insert_pair(row, change, link, extra)
    if inserted is None:
        return None
    setattr(change, row.change_field, row)
    return change, inserted[0]


def snapshot(row: models.Model, fields: tuple[str, ...]) -> dict[str, Any]:
    """JSON-ready values of `fields` (foreign keys as ids)."""
    out: dict[str, Any] = {}
    for name in fields:
        field = row._meta.get_field(name)
        value = getattr(row, field.attname)  # type: ignore[union-attr]
        out[name] = value
    return out
