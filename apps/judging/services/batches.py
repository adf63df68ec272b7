"""Batch mode: a run's calls sent through its endpoint's batch interface (docs/judging.md,
"Batch mode"), one step at a time. Each step, a worker task's body:

1. plans the run (as the live path does), answers from the cache what it can;
2. puts the rest in one batch: a ``CallBatch`` row and its token first, the calls leased
   under the token for the batch's window, then the upload and the batch, tagged with the
   token. A worker killed in between finds the batch by its token (``batch_find``) instead
   of submitting it again: no call is ever in two batches, no batch submitted twice;
3. looks at the open batch (the task asks again later, with backoff) until it ends, then
   stores its results into the same calls, counters and cache as live replies (one line per
   distinct prompt; calls sharing it reuse its reply, as live);
4. lines the batch never answered (it expired, failed, was cancelled) are asked on the live
   path when the run allows it (``batch_live_fallback``), else they fail with the reason.

Every step is safe to run twice or at once: results are saved only where the batch's token
still holds the call, and a batch changes state only from the state it was read in.
"""

from __future__ import annotations

import uuid
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q, QuerySet
from django.db.models.functions import Now
from django.utils import timezone

from apps.endpoints.batches import BatchError, BatchState, batch_find, batch_results
from apps.endpoints.batches import batch_state as remote_state
from apps.endpoints.batches import batch_submit as remote_submit
from apps.endpoints.client import CallOutcome, EndpointConfig
from apps.endpoints.models import Endpoint
from apps.endpoints.runner import Answer
from apps.judging import claims
from apps.judging.call_results import CACHE_COLUMNS, fill_error, fill_from_cache, fill_from_reply
from apps.judging.engine import run_work
from apps.judging.engine.llm_work import call_prepare
from apps.judging.models import (
    BatchStatus,
    CallBatch,
    JudgeCall,
    JudgeRun,
    ParseStatus,
    RunStatus,
)
from apps.judging.scoring import ReplyReader
from apps.judging.services.work import judge_run_plan
from apps.judging.stored_replies import stored_replies

WINDOW = timedelta(hours=25)  # a batch's 24-hour window, and some: its calls' lease
MAX_LINES = 50_000  # OpenAI's limit per batch
GIVE_UP_POLL_ERRORS = 20  # looks in a row the provider did not answer: the batch fails
OVERDUE_S = 5.0  # a look this late was lost with its task (a second one costs one request)


def poll_delay(polls: int) -> float:
    """Seconds until the next look: from ``DISCERN_BATCH_POLL_S``, doubling, at most
    ``DISCERN_BATCH_POLL_MAX_S``."""
    first, most = settings.DISCERN_BATCH_POLL_S, settings.DISCERN_BATCH_POLL_MAX_S
    return float(min(most, first * 2 ** min(polls, 20)))


def _endpoint(run: JudgeRun) -> EndpointConfig:
    assert run.judge.endpoint is not None
    return run.judge.endpoint.config()


def _save(run: JudgeRun, token: str, calls: list[JudgeCall], lines: int = 0) -> None:
    """Store filled calls (still held by ``token``); the batch's answered lines count as the
    run's requests (the provider ran, and bills, each)."""
    claims.results_save(run_id=run.pk, token=token, calls=calls, requests=(lines, lines))


def _open_batches(run: JudgeRun) -> QuerySet[CallBatch]:
    return run.batches.filter(status__in=[BatchStatus.SUBMITTING, BatchStatus.SUBMITTED])


# -- one step ----------------------------------------------------------------------------------


def judge_run_batch_step(*, run_id: int, node: str = "") -> float | None:
    """Move a batch-mode run on; seconds until its next step (None: nothing to wait for)."""
    run = JudgeRun.objects.select_related("judge__endpoint", "strategy").filter(pk=run_id).first()
    if run is None:
        return None
    if run.status != RunStatus.RUNNING:
        _stop(run)
        return None
    JudgeRun.objects.filter(pk=run_id, started_at__isnull=True).update(started_at=Now())
    JudgeRun.objects.filter(pk=run_id).update(heartbeat_at=Now())
    if judge_run_plan(run_id=run_id).status != RunStatus.RUNNING:
        return None
    batch = _open_batches(run).first() or (None if _left_to_live(run) else _open(run))
    if batch is not None:
        batch = _advance(run, batch)
        if batch.open:
            return batch.next_look_in
    if _left_to_live(run):  # what the batch left unanswered, asked here on the live path
        run_work(run, token=claims.new_token(node), share=run.judge.max_concurrency, node=node)
    elif claims.pending_count(run_id):
        # more calls than one batch holds (the next batch: now), or calls waiting for another
        # run's batch to answer their prompts (look again later)
        return 0.0 if batch is not None else poll_delay(0)
    claims.run_finish_if_complete(run_id)
    return None


def _left_to_live(run: JudgeRun) -> bool:
    """Calls an ended batch handed back to the live path, not all asked yet."""
    handed = run.batch_live_fallback and run.batches.filter(to_live__gt=0).exists()
    return handed and claims.pending_count(run.pk) > 0


def _open(run: JudgeRun) -> CallBatch | None:
    """Lease every pending call to a new batch; answer cache hits and impossible prompts at
    once; None when no call is left for a batch. Batches of one endpoint are opened one at a
    time (its row locked), so a prompt another run's batch asks is seen there and waits."""
    token = f"batch/{uuid.uuid4().hex}"
    with transaction.atomic():
        Endpoint.objects.select_for_update(of=("self",)).filter(judges__runs=run).first()
        JudgeRun.objects.select_for_update().filter(pk=run.pk).first()
        if _open_batches(run).exists():
            return None  # another step opened one meanwhile
        batch = CallBatch.objects.create(run=run, token=token, next_poll_at=timezone.now())
        waiting = _fill_what_needs_no_batch(run, token)
        if not waiting:
            batch.delete()
            return None
        for call in waiting:
            call.request["batch"] = token  # answered through it (its tokens at the batch price)
            call.claimed_until = timezone.now() + WINDOW
        JudgeCall.objects.bulk_update(waiting, ["request", "cache_key", "claimed_until"])
        lines = len({c.cache_key for c in waiting})
        CallBatch.objects.filter(pk=batch.pk).update(lines=lines, calls=len(waiting))
    batch.refresh_from_db()
    return batch


def _fill_what_needs_no_batch(run: JudgeRun, token: str) -> list[JudgeCall]:
    """Claim the run's pending calls under ``token``; store at once those the cache answers
    and those whose prompt cannot be made; free those another run's batch asks; the rest."""
    calls = claims.calls_claim(run_id=run.pk, token=token, limit=MAX_LINES)
    endpoint, reader = _endpoint(run), _reader(run)
    ready: list[JudgeCall] = []
    waiting: list[JudgeCall] = []
    for call in calls:
        (waiting if call_prepare(call, run=run, endpoint=endpoint) else ready).append(call)
    cached = stored_replies(JudgeCall, {c.cache_key for c in waiting}, CACHE_COLUMNS)
    for call in [c for c in waiting if c.cache_key in cached]:
        fill_from_cache(call, cached[call.cache_key], reader)
        ready.append(call)
    _save(run, token, ready)
    waiting = [c for c in waiting if c.cache_key not in cached]
    elsewhere = _in_other_batches(run, {c.cache_key for c in waiting})
    if elsewhere:  # another run's batch asks these: wait for its replies (then the cache's)
        deferred = [c.pk for c in waiting if c.cache_key in elsewhere]
        claims.claims_release_calls(run_id=run.pk, token=token, ids=deferred)
    return [c for c in waiting if c.cache_key not in elsewhere]


def _in_other_batches(run: JudgeRun, keys: set[str]) -> set[str]:
    """The prompts among ``keys`` that another run's open batch asks already (the runs of one
    audit share prompts: asked once, as the live path asks them once)."""
    held = JudgeCall.objects.filter(
        cache_key__in=keys, parse_status=ParseStatus.PENDING, claimed_by__startswith="batch/"
    ).exclude(run_id=run.pk)
    return set(held.values_list("cache_key", flat=True))


def _reader(run: JudgeRun) -> ReplyReader:
    assert run.strategy is not None
    return ReplyReader.for_strategy(run.strategy)


def _held(batch: CallBatch) -> list[JudgeCall]:
    held = JudgeCall.objects.filter(
        run_id=batch.run_id, claimed_by=batch.token, parse_status=ParseStatus.PENDING
    )
    return list(held.order_by("id"))


def _advance(run: JudgeRun, batch: CallBatch) -> CallBatch:
    """Submit (or find again), or look at the batch; store its results once it ended."""
    endpoint = _endpoint(run)
    try:
        if batch.status == BatchStatus.SUBMITTING:
            state = _submitted(endpoint, batch)
        else:
            state = remote_state(endpoint, batch.remote_id)
        if state is None:  # another step may be submitting it right now
            CallBatch.objects.filter(pk=batch.pk).update(
                next_poll_at=timezone.now() + timedelta(seconds=poll_delay(0))
            )
        else:
            _seen(batch, state)
        batch.refresh_from_db()
        if state is not None and state.ended and batch.status == BatchStatus.SUBMITTED:
            _store(run, batch, state, batch_results(endpoint, state))
    except BatchError as error:
        _trouble(run, batch, error)
    batch.refresh_from_db()
    return batch


def _submitted(endpoint: EndpointConfig, batch: CallBatch) -> BatchState | None:
    """Submit the batch, unless an earlier step did (it died after submitting, before it saved
    the batch's id: the provider has the batch under our token). An earlier step's submit
    may still be under way while younger than a submit can take: None, look later."""
    if batch.polls:
        found = batch_find(endpoint, batch.token)
        if found is not None:
            return found
        young = timezone.now() - timedelta(seconds=2 * endpoint.timeout_s + 30)
        if batch.created_at > young:
            return None
    CallBatch.objects.filter(pk=batch.pk).update(polls=batch.polls + 1)
    bodies = {c.cache_key: c.request["body"] for c in _held(batch)}
    return remote_submit(endpoint, bodies, batch.token)


def _seen(batch: CallBatch, state: BatchState) -> None:
    now = timezone.now()
    polls = batch.polls + 1
    CallBatch.objects.filter(pk=batch.pk).update(
        status=BatchStatus.SUBMITTED,
        remote_id=state.id,
        remote_status=state.status,
        lines_done=state.completed + state.failed,
        lines_failed=state.failed,
        polls=polls,
        poll_errors=0,
        submitted_at=batch.submitted_at or now,
        next_poll_at=now + timedelta(seconds=poll_delay(polls)),
    )


def _trouble(run: JudgeRun, batch: CallBatch, error: BatchError) -> None:
    """The provider did not answer: look again later; give up when it is no passing thing."""
    errors = batch.poll_errors + 1
    if error.transient and errors < GIVE_UP_POLL_ERRORS:
        CallBatch.objects.filter(pk=batch.pk).update(
            poll_errors=errors,
            error=str(error)[:2000],
            next_poll_at=timezone.now() + timedelta(seconds=poll_delay(batch.polls + errors)),
        )
    else:
        _store(run, batch, None, {}, failure=f"the batch interface refused: {error}")


def _store(
    run: JudgeRun,
    batch: CallBatch,
    state: BatchState | None,
    answered: dict[str, CallOutcome],
    failure: str = "",
) -> None:
    """Fill the batch's calls from its lines (the first call of a prompt from its line, the
    others reuse that reply, as live). Calls left unanswered (or answered with an error, when
    the run may ask live) go back to the live path, or fail with the batch's reason."""
    reader, live = _reader(run), run.batch_live_fallback
    filled: list[JudgeCall] = []
    unanswered: list[JudgeCall] = []
    leaders: dict[str, JudgeCall] = {}
    for call in _held(batch):
        outcome = answered.get(call.cache_key)
        if outcome is None or (live and not outcome.ok):
            unanswered.append(call)
        elif call.cache_key in leaders:  # reuses its leader's reply; an error, it shares
            leader = leaders[call.cache_key]
            if leader.parse_status == ParseStatus.ERROR:
                fill_from_reply(call, Answer(call.cache_key, outcome), reader)
            else:
                source = {column: getattr(leader, column) for column in CACHE_COLUMNS}
                fill_from_cache(call, {**source, "id": leader.pk}, reader)
            filled.append(call)
        else:
            fill_from_reply(call, Answer(call.cache_key, outcome), reader)
            leaders[call.cache_key] = call
            filled.append(call)
    why = failure or _why_unanswered(state)
    if not live:
        for call in unanswered:
            fill_error(call, kind="batch", message=why)
        filled += unanswered
    with transaction.atomic():
        ended = CallBatch.objects.filter(pk=batch.pk, status=batch.status).update(
            status=BatchStatus.FAILED if failure else BatchStatus.FETCHED,
            error=why if unanswered else "",
            to_live=len(unanswered) if live else 0,
            finished_at=Now(),
        )
        if not ended:
            return  # another step stored it
        _save(run, batch.token, filled, lines=len(answered))
        if live:
            claims.claims_release(run_id=run.pk, token=batch.token)


def _why_unanswered(state: BatchState | None) -> str:
    if state is None:
        return "the batch ended before answering it"
    said = f" ({state.errors})" if state.errors else ""
    return f"the batch {state.status} before answering it{said}"


def _stop(run: JudgeRun) -> None:
    """A cancelled or failed run: its open batches stop being looked at and their calls are
    freed (a resume submits them again; the provider's batch is left to expire)."""
    for batch in _open_batches(run):
        with transaction.atomic():
            CallBatch.objects.filter(pk=batch.pk, status=batch.status).update(
                status=BatchStatus.FAILED, error=f"the run was {run.status}", finished_at=Now()
            )
            claims.claims_release(run_id=run.pk, token=batch.token)


def batch_runs_recover() -> list[int]:
    """Batch-mode runs whose next step is overdue (its task was lost with a worker or the
    broker): those with an open batch past its next look, and those with none and no sign
    of life for two lease times."""
    now = timezone.now()
    running = JudgeRun.objects.filter(status=RunStatus.RUNNING, batch_mode=True)
    open_batches = CallBatch.objects.filter(
        status__in=[BatchStatus.SUBMITTING, BatchStatus.SUBMITTED]
    )
    since = now - timedelta(seconds=OVERDUE_S)
    overdue = open_batches.filter(Q(next_poll_at__lt=since) | Q(next_poll_at__isnull=True))
    stale = now - timedelta(seconds=2 * claims.LEASE_SECONDS)
    quiet = running.exclude(pk__in=open_batches.values("run_id")).filter(
        Q(heartbeat_at__lt=stale) | Q(heartbeat_at__isnull=True)
    )
    late = running.filter(pk__in=overdue.values("run_id"))
    return sorted(set(late.values_list("id", flat=True)) | set(quiet.values_list("id", flat=True)))
