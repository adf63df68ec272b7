"""The database side of working a run: claim, save, renew leases, watch for cancellation;
and metric judges, which need nothing else."""

from __future__ import annotations

import time

from apps.judging import claims
from apps.judging.call_results import fill_metric
from apps.judging.metric_judges import metric_score
from apps.judging.models import JudgeCall, JudgeRun, RunStatus

FLUSH_EVERY_S = 0.1  # a killed worker loses replies not yet stored: keep the window short
FLUSH_SIZE = 200
STATUS_EVERY_S = 0.5
CANCEL_GRACE_S = 5.0  # on cancel, calls already on the wire get this long to finish and be kept


class Work:
    """Shared loop of both engines: claim, process, save, renew, watch for cancellation."""

    batch_size = 200

    def __init__(self, run: JudgeRun, token: str) -> None:
        self.run = run
        self.token = token
        self.buffer: list[JudgeCall] = []
        self.related = claims.RelatedCache()
        self.cancelled = False
        self._next_status = 0.0
        self._next_renew = time.monotonic() + claims.LEASE_SECONDS / 3
        self._last_flush = time.monotonic()

    def flush(self) -> None:
        batch, self.buffer = self.buffer, []
        claims.results_save(
            run_id=self.run.pk, token=self.token, calls=batch, requests=self.requests_report()
        )
        self._last_flush = time.monotonic()

    def requests_report(self) -> tuple[int, int]:
        """HTTP requests this task sent: (since the last report, in all); none for metrics."""
        return 0, 0

    def renew(self) -> None:
        claims.claims_renew(run_id=self.run.pk, token=self.token)

    def tick(self) -> None:
        """Check for cancellation and keep leases alive (cheap; call often)."""
        now = time.monotonic()
        if now >= self._next_status:
            self._next_status = now + STATUS_EVERY_S
            status = JudgeRun.objects.filter(pk=self.run.pk).values_list("status", flat=True)
            self.cancelled = status.first() != RunStatus.RUNNING
        if now >= self._next_renew:
            self._next_renew = now + claims.LEASE_SECONDS / 3
            self.renew()

    def wait_for_others(self) -> bool:
        """Nothing left to claim: True to stop (no call pending), else wait and look again
        (other workers hold the rest; if one dies, its leases expire and we take over)."""
        if not claims.pending_count(self.run.pk):
            return True
        deadline = time.monotonic() + min(1.0, claims.LEASE_SECONDS / 3)
        while time.monotonic() < deadline and not self.cancelled:
            self.tick()
            time.sleep(0.05)
        return self.cancelled

    def claim(self, limit: int) -> list[JudgeCall]:
        return claims.calls_claim(
            run_id=self.run.pk, token=self.token, limit=limit, related=self.related
        )

    def run_all(self) -> None:
        raise NotImplementedError

    def finish(self) -> None:
        self.flush()  # also counts requests whose replies never came (cancelled, abandoned)
        claims.claims_release(run_id=self.run.pk, token=self.token)


class MetricWork(Work):
    """A classic metric: computed right here, no HTTP."""

    def run_all(self) -> None:
        metric = self.run.judge.metric
        try:
            while not self.cancelled:
                batch = self.claim(self.batch_size)
                if not batch:
                    if self.wait_for_others():
                        break
                    continue
                for call in batch:
                    reference = call.reference_text
                    result = metric_score(metric, text=call.target_text, reference=reference)
                    named = "original" if reference == call.item.original else "reference"
                    fill_metric(call, metric, result, named)
                self.buffer.extend(batch)
                self.flush()
                self.tick()
        finally:
            self.finish()
