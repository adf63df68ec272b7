"""Who works on which pending call: short leases in the database.

A worker claims a batch of pending calls by writing its token and a lease expiry on them in
one conditional UPDATE (only unclaimed or expired rows), renews the lease while it works, and
saves a result only for rows it still holds. A worker that dies leaves leases that expire, and
any other worker of the run then takes the calls over; a restarted worker releases at once the
leases of its own node name (its previous incarnation is dead). So a call is never stored
twice, and a call whose reply was stored is never asked again.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Sequence
from datetime import timedelta
from functools import cache
from typing import Any

from django.db import connection, transaction
from django.db.models import Count, F, Q, QuerySet, Sum
from django.db.models.functions import Greatest, Now
from django.utils import timezone

from apps import plain_sql
from apps import sql_rows as plain
from apps.catalog.models import Criterion, Metric
from apps.corpus.models import Perturbation, SourceItem
from apps.judging.models import (
    Candidate,
    JudgeCall,
    JudgeRun,
    ParseStatus,
    RunRequests,
    RunStatus,
)

LEASE_SECONDS = 15.0
RESULT_FIELDS = [
    "request",
    "raw_response",
    "parse_status",
    "parse_reason",
    "score",
    "verdict",
    "preferred",
    "logprobs",
    "format_retry",
    "prompt_tokens",
    "completion_tokens",
    "latency",
    "total_seconds",
    "attempts",
    "request_id",
    "system_fingerprint",
    "response_model",
    "finish_reason",
    "cache_key",
    "cached",
    "cached_from",
    "error_kind",
    "error",
    "claimed_by",
    "claimed_until",
    "finished_at",
]


def new_token(node: str = "") -> str:
    """``<node>/<pid>/<random>``: the node part lets a restarted worker free its old leases."""
    return f"{node or 'local'}/{os.getpid()}/{uuid.uuid4().hex[:12]}"


def _lease() -> timedelta:
    return timedelta(seconds=LEASE_SECONDS)


def _claimable(run_id: int) -> QuerySet[JudgeCall]:
    return JudgeCall.objects.filter(run_id=run_id, parse_status=ParseStatus.PENDING).filter(
        Q(claimed_until__isnull=True) | Q(claimed_until__lt=Now())
    )


def calls_claim(
    *, run_id: int, token: str, limit: int, related: RelatedCache | None = None
) -> list[JudgeCall]:
    """Up to ``limit`` pending calls, now held by ``token``, with what prompts need attached
    (from ``related``: the same texts and criteria come back for every sample and quality)."""
    if plain_sql.fast():
        calls = _claim_rows(run_id, token, limit)
    else:
        candidates = _claim_ids_portable(run_id, token, limit)
        if not candidates:
            return []
        calls = list(
            JudgeCall.objects.filter(
                id__in=candidates, claimed_by=token, parse_status="pending"
            ).order_by("id")
        )
    (related or RelatedCache()).attach(calls)
    return calls


@cache
def _claim_statement() -> str:
    """The calls chosen once (a MATERIALIZED CTE), then leased and returned. Chosen in an
    `IN (SELECT ... LIMIT n ...)` subquery instead, a plan that evaluates the subquery again for
    each row scanned (the generic plan of the prepared statement did) leased every pending
    call of the run: each evaluation skipped the rows the statement had just updated and
    picked the next n."""
    quote = connection.ops.quote_name
    table, pk = quote(JudgeCall._meta.db_table), quote("id")
    until, status = quote("claimed_until"), quote("parse_status")
    return (
        f"WITH chosen AS MATERIALIZED (SELECT {pk} FROM {table} WHERE {quote('run_id')} = %s "
        f"AND {status} = 'pending' AND ({until} IS NULL OR {until} < STATEMENT_TIMESTAMP()) "
        f"ORDER BY {pk} LIMIT %s FOR UPDATE SKIP LOCKED) "
        f"UPDATE {table} AS c SET {quote('claimed_by')} = %s, "
        f"{until} = STATEMENT_TIMESTAMP() + %s FROM chosen WHERE c.{pk} = chosen.{pk} "
        f"RETURNING {plain.columns(JudgeCall, 'c').sql}"
    )


def _claim_rows(run_id: int, token: str, limit: int) -> list[JudgeCall]:
    """PostgreSQL: choose, lease and read in one statement (one round trip, its own
    transaction). SKIP LOCKED: workers claiming at the same moment take different rows.
    Without it both chose the same ids, one won them all and the other found nothing, took
    the run for finished by others and sat out a second: half a run's speed."""
    found = plain.fetch(_claim_statement(), [run_id, limit, token, _lease()])
    load = plain.columns(JudgeCall, "c").load
    return sorted((load(row) for row in found), key=lambda call: call.pk)


def _claim_ids_portable(run_id: int, token: str, limit: int) -> list[int]:
    """Other databases (SQLite, one writer at a time): choose, then lease, in a transaction."""
    with transaction.atomic():
        chosen = _claimable(run_id).order_by("id").select_for_update(skip_locked=True)
        candidates = list(chosen.values_list("id", flat=True)[:limit])
        if candidates:
            _claimable(run_id).filter(id__in=candidates).update(
                claimed_by=token, claimed_until=Now() + _lease()
            )
    return candidates


class RelatedCache:
    """Items, perturbations, criteria, metrics and search candidates of claimed calls,
    fetched once each."""

    LIMIT = 5000  # objects kept per kind; a huge run does not keep every text in memory

    def __init__(self) -> None:
        self.items: dict[int, SourceItem] = {}
        self.perturbations: dict[int, Perturbation] = {}
        self.criteria: dict[int, Criterion] = {}
        self.metrics: dict[int, Metric] = {}
        self.candidates: dict[int, Candidate] = {}

    def _fill(self, cache: dict[int, Any], ids: set[int], queryset: QuerySet[Any]) -> None:
        missing = ids - cache.keys()
        if not missing:
            return
        if len(cache) + len(missing) > self.LIMIT:
            cache.clear()
            missing = ids
        cache.update(queryset.in_bulk(missing))

    def attach(self, calls: Sequence[JudgeCall]) -> None:
        ids = {
            name: {getattr(c, f"{name}_id") for c in calls} - {None}
            for name in ("item", "perturbation", "criterion", "metric", "candidate")
        }
        items = SourceItem.objects.select_related("task", "dataset__task")
        self._fill(self.items, ids["item"], items)
        self._fill(self.perturbations, ids["perturbation"], Perturbation.objects.all())
        self._fill(self.criteria, ids["criterion"], Criterion.objects.select_related("aspect"))
        self._fill(self.metrics, ids["metric"], Metric.objects.all())
        self._fill(self.candidates, ids["candidate"], Candidate.objects.all())
        for call in calls:
            call.item = self.items[call.item_id]
            if call.perturbation_id is not None:
                call.perturbation = self.perturbations[call.perturbation_id]
            if call.criterion_id is not None:
                call.criterion = self.criteria[call.criterion_id]
            if call.metric_id is not None:
                call.metric = self.metrics[call.metric_id]
            if call.candidate_id is not None:
                call.candidate = self.candidates[call.candidate_id]


def claims_renew(*, run_id: int, token: str) -> None:
    """Extend this worker's leases and show the run is alive."""
    JudgeCall.objects.filter(run_id=run_id, claimed_by=token, parse_status="pending").update(
        claimed_until=Now() + _lease()
    )
    JudgeRun.objects.filter(pk=run_id).update(heartbeat_at=Now())


def claims_release(*, run_id: int, token: str) -> int:
    return JudgeCall.objects.filter(
        run_id=run_id, claimed_by=token, parse_status=ParseStatus.PENDING
    ).update(claimed_by="", claimed_until=None)


def claims_release_calls(*, run_id: int, token: str, ids: Sequence[int]) -> int:
    """Free these of ``token``'s calls (left for later)."""
    return JudgeCall.objects.filter(
        run_id=run_id, pk__in=ids, claimed_by=token, parse_status=ParseStatus.PENDING
    ).update(claimed_by="", claimed_until=None)


def node_claims_release(*, node: str) -> list[int]:
    """Free the leases of a node's previous incarnation; the runs they belonged to."""
    held = JudgeCall.objects.filter(
        parse_status=ParseStatus.PENDING, claimed_by__startswith=f"{node}/"
    )
    run_ids = sorted(set(held.values_list("run_id", flat=True)))
    held.update(claimed_by="", claimed_until=None)
    return run_ids


def pending_count(run_id: int) -> int:
    return JudgeCall.objects.filter(run_id=run_id, parse_status=ParseStatus.PENDING).count()


def _increments(calls: Sequence[JudgeCall]) -> dict[str, int]:
    paid = [c for c in calls if not c.cached and c.parse_status != ParseStatus.PENDING]
    retries = [c.format_retry for c in paid if c.format_retry]
    return {
        "done": sum(c.parse_status in (ParseStatus.PARSED, ParseStatus.UNPARSED) for c in calls),
        "failed": sum(c.parse_status == ParseStatus.ERROR for c in calls),
        "cached": sum(c.cached for c in calls),
        "unscored": sum(c.parse_status == ParseStatus.UNPARSED for c in calls),
        "prompt_tokens": sum(c.prompt_tokens or 0 for c in paid)
        + sum(int(r.get("prompt_tokens") or 0) for r in retries),
        "completion_tokens": sum(c.completion_tokens or 0 for c in paid)
        + sum(int(r.get("completion_tokens") or 0) for r in retries),
    }


def _update_statement() -> str:
    quote = connection.ops.quote_name
    fields: list[Any] = [JudgeCall._meta.get_field(name) for name in RESULT_FIELDS]
    assignments = ", ".join(f"{quote(f.column)} = %s" for f in fields)
    return (
        f"UPDATE {quote(JudgeCall._meta.db_table)} SET {assignments} "
        f"WHERE {quote('id')} = %s AND {quote('claimed_by')} = %s "
        f"AND {quote('parse_status')} = 'pending'"
    )


def _unnest_statement() -> str:
    """PostgreSQL: every row of a batch in one UPDATE, each column sent as one array."""
    quote = connection.ops.quote_name
    fields: list[Any] = [JudgeCall._meta.get_field(name) for name in RESULT_FIELDS]
    pk: Any = JudgeCall._meta.pk
    arrays = ", ".join(f"%b::{f.cast_db_type(connection)}[]" for f in [*fields, pk])
    names = ", ".join(quote(f.column) for f in [*fields, pk])
    assignments = ", ".join(f"{quote(f.column)} = v.{quote(f.column)}" for f in fields)
    table, pk_column = quote(JudgeCall._meta.db_table), quote(pk.column)
    return (
        f"UPDATE {table} SET {assignments} FROM unnest({arrays}) AS v({names}) "
        f"WHERE {table}.{pk_column} = v.{pk_column} AND {table}.{quote('claimed_by')} = %b "
        f"AND {table}.{quote('parse_status')} = 'pending'"
    )


def _columns() -> list[tuple[str, Any]]:
    """(attribute, field or None): plain values go to the driver as they are; JSON and
    dates need the backend's adaptation (the hot path of saving, so computed once)."""
    columns = []
    for name in RESULT_FIELDS:
        field: Any = JudgeCall._meta.get_field(name)
        plain = field.get_internal_type() not in ("JSONField", "DateTimeField")
        columns.append((field.attname, None if plain else field))
    return columns


def _row(call: JudgeCall, token: str, columns: list[tuple[str, Any]]) -> list[Any]:
    values = []
    for attname, field in columns:
        value = getattr(call, attname)
        values.append(value if field is None else field.get_db_prep_save(value, connection))
    return [*values, call.pk, token]


def _write(calls: Sequence[JudgeCall], token: str) -> int:
    """Write the calls' results where ``token`` still holds them; how many were written."""
    columns = _columns()
    rows = [_row(c, token, columns) for c in calls]
    if plain_sql.fast():
        arrays = [list(column) for column in zip(*rows, strict=True)][:-1]  # all but token
        # parameters apart from the statement, in binary: Django's cursors escaped every
        # text of a batch (the prompts and replies) into it, a tenth of a worker's CPU
        # (docs/benchmarks.md, "Judge throughput"). Not prepared: an array changes type with
        # its values (a column of nulls), so each batch could be another prepared statement
        with plain_sql.cursor(prepare=False) as cursor:
            cursor.execute(_unnest_statement(), [*arrays, token])
            return int(cursor.rowcount)
    with connection.cursor() as cursor:
        cursor.executemany(_update_statement(), rows)
        return int(cursor.rowcount)


@transaction.atomic
def results_save(
    *, run_id: int, token: str, calls: Sequence[JudgeCall], requests: tuple[int, int] = (0, 0)
) -> int:
    """Store finished calls still held by ``token`` and count them on the run, atomically.

    ``requests`` = (attempts sent since the last save, attempts sent in all) by this task:
    the HTTP-requests counter counts attempts as they are sent (``engine.once``), not from
    the stored calls, so attempts abandoned at cancel or kill count too; the task's total is
    kept beside (``RunRequests``), for the attempts a killed task never saved.

    One UPDATE for the whole batch on PostgreSQL (each column an array, ``unnest``), a
    batch of parametrised UPDATEs elsewhere (``bulk_update`` builds a CASE per field and
    row: ~17 ms a row at 26 fields); then one UPDATE of the run's counters. The WHERE clause
    keeps the lease guard: a call whose lease was lost (another worker took it over) is not
    written, and the other worker's result is the one kept; the run's counters are then
    recounted rather than incremented.
    """
    added, sent = requests
    if added:
        RunRequests.objects.bulk_create(
            [RunRequests(run_id=run_id, token=token, sent=sent)],
            update_conflicts=True,
            unique_fields=["run", "token"],
            update_fields=["sent"],
        )
    if not calls:
        if added:
            JudgeRun.objects.filter(pk=run_id).update(http_requests=F("http_requests") + added)
        return 0
    now = timezone.now()
    for call in calls:
        call.claimed_by, call.claimed_until, call.finished_at = "", None, now
    written = _write(calls, token)
    if written != len(calls):
        JudgeRun.objects.filter(pk=run_id).update(http_requests=F("http_requests") + added)
        run_recount(run_id)
        return written
    increments = {**_increments(calls), "http_requests": added}
    beat = JudgeRun._meta.get_field("heartbeat_at").get_db_prep_save(now, connection)
    with connection.cursor() as cursor:
        cursor.execute(_counters_statement(increments), [*increments.values(), beat, run_id])
    return written


def _counters_statement(increments: dict[str, int]) -> str:
    """Add to the run's counters in the same transaction (plain SQL: this runs ~10 times a
    second per worker, and building it through the ORM cost more than the rows it counts)."""
    quote = connection.ops.quote_name
    adds = ", ".join(f"{quote(name)} = {quote(name)} + %s" for name in increments)
    return (
        f"UPDATE {quote(JudgeRun._meta.db_table)} SET {adds}, {quote('heartbeat_at')} = %s "
        f"WHERE {quote('id')} = %s"
    )


def failed_calls_reset(*, run_id: int) -> int:
    """Failed calls back to pending, each error kept in ``previous_errors``; how many."""
    quote = connection.ops.quote_name
    history_field: Any = JudgeCall._meta.get_field("previous_errors")
    failed = JudgeCall.objects.filter(run_id=run_id, parse_status=ParseStatus.ERROR)
    params = []
    for pk, kind, error, attempts, finished, previous in failed.values_list(
        "id", "error_kind", "error", "attempts", "finished_at", "previous_errors"
    ).iterator():
        entry = {
            "kind": kind,
            "error": error,
            "attempts": attempts,
            "at": finished.isoformat() if finished else None,
        }
        params.append([history_field.get_db_prep_save([*previous, entry], connection), pk])
    statement = (
        f"UPDATE {quote(JudgeCall._meta.db_table)} SET {quote('previous_errors')} = %s, "
        f"{quote('parse_status')} = 'pending', {quote('error_kind')} = '', {quote('error')} = '', "
        f"{quote('finished_at')} = NULL, {quote('claimed_by')} = '', "
        f"{quote('claimed_until')} = NULL "
        f"WHERE {quote('id')} = %s AND {quote('parse_status')} = 'error'"
    )
    with transaction.atomic(), connection.cursor() as cursor:
        if params:
            cursor.executemany(statement, params)
        run_recount(run_id)
    return len(params)


def run_recount(run_id: int) -> None:
    """Set the run's counters from its calls (after a crash they could lag behind). The
    HTTP-requests counter is only ever raised: earlier attempts of retried calls, and ones
    whose replies never came back, are not all in the calls."""
    calls = JudgeCall.objects.filter(run_id=run_id)
    paid = calls.filter(cached=False).exclude(parse_status=ParseStatus.PENDING)
    sums = paid.aggregate(
        attempts=Sum("attempts"), prompt=Sum("prompt_tokens"), completion=Sum("completion_tokens")
    )
    retries: list[dict[str, Any]] = [
        r for r in paid.exclude(format_retry=None).values_list("format_retry", flat=True) if r
    ]
    JudgeRun.objects.filter(pk=run_id).update(
        total=calls.count(),
        done=calls.filter(parse_status__in=["parsed", "unparsed"]).count(),
        failed=calls.filter(parse_status=ParseStatus.ERROR).count(),
        cached=calls.filter(cached=True).count(),
        unscored=calls.filter(parse_status=ParseStatus.UNPARSED).count(),
        http_requests=Greatest(
            F("http_requests"),
            (sums["attempts"] or 0)
            + sum(int(r.get("attempts") or 0) for r in retries)
            + _earlier_attempts(calls),
        ),
        prompt_tokens=(sums["prompt"] or 0)
        + sum(int(r.get("prompt_tokens") or 0) for r in retries),
        completion_tokens=(sums["completion"] or 0)
        + sum(int(r.get("completion_tokens") or 0) for r in retries),
    )


def _earlier_attempts(calls: QuerySet[JudgeCall]) -> int:
    """Attempts of earlier tries of retried calls (kept in ``previous_errors``)."""
    histories = calls.exclude(previous_errors=[]).values_list("previous_errors", flat=True)
    return sum(int(e.get("attempts") or 0) for history in histories for e in history or [])


def run_finish_if_complete(run_id: int) -> bool:
    """Mark a running run done once no call is pending; True if it is (now) done."""
    if pending_count(run_id):
        return False
    run_recount(run_id)
    running = JudgeRun.objects.filter(pk=run_id, status=RunStatus.RUNNING)
    failure = _all_failed_reason(run_id)
    if failure:
        running.update(status=RunStatus.FAILED, error=failure, finished_at=Now())
        return False
    running.update(status=RunStatus.DONE, finished_at=Now())
    return JudgeRun.objects.filter(pk=run_id, status=RunStatus.DONE).exists()


def _all_failed_reason(run_id: int) -> str:
    """Why a run failed when not one of its calls got a reply ("" if some did)."""
    calls = JudgeCall.objects.filter(run_id=run_id)
    if calls.exclude(parse_status=ParseStatus.ERROR).exists() or not calls.exists():
        return ""
    reasons = (
        calls.values("error_kind", "error")
        .annotate(n=Count("id"))
        .order_by("-n", "error_kind", "error")[:3]
    )
    shown = "; ".join(f"{r['n']} x {r['error_kind']}: {r['error'][:300]}" for r in reasons)
    return f"every call failed ({calls.count()}); most common: {shown}"
