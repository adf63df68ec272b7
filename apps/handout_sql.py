"""The statements of a hand-out of pooled work, built from what a kind declares
(services/leases.py; docs/annotation.md, "Speed").

A kind of pooled work names its tables (`Pool`) and, if it reads what it shows with the
hand-out, a selector's statement of one unit: the API's (`Shown`) or the page's item (`Page`),
joined to the slot handed out; no statement is built of a kind's fragments.
The statements are written here once a process: the person's held slot renewed, else the
first open one claimed (`parts`, run one by one on SQLite), or all of it in one statement
(`statements`, PostgreSQL), with what is shown of the unit handed out.

Generic over the models it is given (imports Django and the SQL layer only).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import models

from apps import sql_rows as rows


@dataclass(frozen=True)
class Pool:
    """The tables of a kind of pooled work: its slots (whose `unit_field` names the unit),
    its answers (by `person`), what a person put back (`skips`), and the control items
    served (`serves`, of `controls`), whose units a person is not handed again; the
    membership rows (`members`) a person's requests queue on."""

    slots: Any
    answers: type[models.Model]
    person: str
    skips: type[models.Model]
    serves: type[models.Model]
    controls: type[models.Model]
    members: type[models.Model]


@dataclass(frozen=True)
class Shown:
    """What the API shows of a unit, read by the statement that hands it out: `sql()` is a
    statement of one unit (given as `%(<unit field>)s`, with `%(study)s` and `%(person)s`),
    run for the slot handed out."""

    sql: Callable[[], str]


@dataclass(frozen=True)
class Page(Shown):
    """The page's item of a unit, read by a page's hand-out: `sql()` as `Shown`'s, and
    `item(study, person, row)` the item from its row (the person holds the unit)."""

    item: Callable[..., Any]


@functools.cache
def parts(pool: Pool) -> tuple[str, str, tuple[str, str, str], str]:
    """The statements of a hand-out of pooled work, written once: the person's held slot;
    it renewed (`%(id)s`); the first open slot they may take (skipped units excluded, then
    included, then included and not locked: "is any left?"); it claimed (`%(id)s`, if it is
    still open). `statements` joins them into one on PostgreSQL."""
    slots, unit = rows.table(pool.slots), f'"{pool.slots.unit_field}_id"'
    answers, person = rows.table(pool.answers), f'"{pool.person}_id"'
    skips, serves = rows.table(pool.skips), rows.table(pool.serves)
    controls = rows.table(pool.controls)
    returned = rows.columns(pool.slots, "x").sql.replace('x."', '"')
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
def statements(pool: Pool, shown: Shown | None, page: Page | None) -> tuple[str, str]:
    """The membership lock, and `parts` as one statement: the held slot renewed, or else
    the first open one claimed, reading what the API shows of the unit (`shown`) or the
    page's item (`page`) (PostgreSQL)."""
    held, renew, (first, again, _), claim = parts(pool)
    lock = (
        f"SELECT 1 FROM {rows.table(pool.members)} "
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
    read = page or shown
    if read is None:
        return lock, statement + "SELECT * FROM got"
    # The read's statement, of the unit handed out. OFFSET 0: planned as a statement of its
    # own, not merged into the hand-out's joins (which doubled the whole statement's
    # planning, 2.6 against 1.35 ms: it is planned again whenever psycopg drops its prepared
    # statements, after any rollback).
    field = pool.slots.unit_field
    item = read.sql().replace(f"%({field})s", f"got.{field}_id")
    statement += f"SELECT got.*, item.* FROM got LEFT JOIN LATERAL ({item} OFFSET 0) item ON true"
    return lock, statement


@functools.cache
def close_sql(slots: type[models.Model], unit: tuple[str, ...]) -> str:
    """The person's open slot of the unit marked done (its id returned)."""
    where = " AND ".join(f'"{name}" = %s' for name in ("study_id", "annotator_id", *unit))
    return (
        f"UPDATE {rows.table(slots)} SET done_at = %s "
        f"WHERE {where} AND done_at IS NULL RETURNING id"
    )
