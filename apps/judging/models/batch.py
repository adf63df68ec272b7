"""Call batches: a run's calls sent through its endpoint's batch interface (OpenAI's
``/v1/files`` + ``/v1/batches``), one row per batch, kept from before it is submitted until
its results are stored (apps.judging.batches)."""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from apps.judging.models.run import JudgeRun

#: The provider's states of a batch (OpenAI's names), in words.
REMOTE_STATES = {
    "validating": "being checked",
    "in_progress": "in progress",
    "finalizing": "finishing",
    "completed": "completed",
    "expired": "expired",
    "failed": "failed",
    "cancelling": "being cancelled",
    "cancelled": "cancelled",
}


class BatchStatus(models.TextChoices):
    SUBMITTING = "submitting", "Being submitted"
    SUBMITTED = "submitted", "Submitted"
    FETCHED = "fetched", "Results stored"
    FAILED = "failed", "Failed"


class CallBatch(models.Model):
    """One batch of a run's calls. ``token`` is ours, made before anything is sent: the
    calls are leased under it, and the provider's batch carries it in its metadata, so a
    worker killed between submitting and saving ``remote_id`` finds the batch again instead
    of submitting it twice. Each line's ``custom_id`` is its calls' cache key."""

    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="batches")
    token = models.CharField(max_length=64, unique=True)
    status = models.CharField(
        max_length=12, choices=BatchStatus.choices, default=BatchStatus.SUBMITTING
    )
    remote_id = models.CharField(max_length=200, blank=True)
    remote_status = models.CharField(max_length=20, blank=True)
    lines = models.PositiveIntegerField(default=0, help_text="Requests in the batch.")
    lines_done = models.PositiveIntegerField(default=0, help_text="As the provider counts.")
    lines_failed = models.PositiveIntegerField(default=0)
    calls = models.PositiveIntegerField(default=0, help_text="Calls the lines answer.")
    to_live = models.PositiveIntegerField(
        default=0, help_text="Calls it left unanswered, handed to the live path."
    )
    polls = models.PositiveIntegerField(default=0)
    poll_errors = models.PositiveSmallIntegerField(
        default=0, help_text="Polls in a row the provider did not answer."
    )
    next_poll_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["run", "id"]
        indexes = [models.Index(fields=["status", "next_poll_at"])]

    def __str__(self) -> str:
        return f"batch {self.remote_id or self.token} of run {self.run_id}: {self.status}"

    @property
    def open(self) -> bool:
        return self.status in (BatchStatus.SUBMITTING, BatchStatus.SUBMITTED)

    @property
    def progress(self) -> str:
        """What the run page says: "submitted, 40 of 120 done"."""
        if self.status == BatchStatus.SUBMITTING:
            return f"being submitted, {self.lines} requests"
        if self.status == BatchStatus.SUBMITTED:
            said = f" (the provider: {self.remote_state})" if self.remote_status else ""
            return f"submitted, {self.lines_done} of {self.lines} done{said}"
        if self.status == BatchStatus.FETCHED:
            return f"{self.remote_state}, {self.lines_done} of {self.lines} done, stored"
        return f"failed: {self.error}"

    @property
    def remote_state(self) -> str:
        """What the provider says of it, in words."""
        return REMOTE_STATES.get(self.remote_status, self.remote_status.replace("_", " "))

    @property
    def next_look_in(self) -> float:
        """Seconds until the provider is asked again (0: now)."""
        if self.next_poll_at is None:
            return 0.0
        return max(0.0, (self.next_poll_at - timezone.now()).total_seconds())
