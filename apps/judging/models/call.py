"""Judge calls: every call of a run is kept, with its request, raw reply and outcome."""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from apps.catalog.models import Criterion, Metric
from apps.corpus.models import Perturbation, SourceItem
from apps.judging.models.run import JudgeRun


class ParseStatus(models.TextChoices):
    PENDING = "pending", "Not made yet"
    PARSED = "parsed", "Parsed"
    UNPARSED = "unparsed", "Unparsed (unscored)"
    ERROR = "error", "Error (no usable reply)"


class Preferred(models.TextChoices):
    """A pairwise verdict about the texts themselves, whatever order they were shown in."""

    ORIGINAL = "original", "Original preferred"
    PERTURBED = "perturbed", "Perturbed preferred"
    TIE = "tie", "Tie"


#: The identity of a call inside its run, as stored in ``JudgeCall.identity``.
def call_identity(
    *,
    item_id: int,
    perturbation_id: int | None,
    criterion_id: int | None,
    metric_id: int | None,
    sample_index: int,
    original_first: bool | None,
) -> str:
    order = "-" if original_first is None else ("o" if original_first else "p")
    return (
        f"i{item_id}.p{perturbation_id or 0}.c{criterion_id or 0}.m{metric_id or 0}"
        f".s{sample_index}.{order}"
    )


class JudgeCall(models.Model):
    """One call: (run, text, criterion or metric, sample index, order).

    ``perturbation`` null: the item's original was judged. Pairwise calls show the original and
    the perturbation; ``original_first`` says which came first (null for single-text
    strategies). ``verdict`` is what the judge said ("A" = the first text shown, "B", "tie");
    ``preferred`` is the same verdict about the texts: "original", "perturbed" or "tie".

    An unparseable reply keeps its raw text with ``parse_status`` "unparsed" and no score.
    ``candidate`` set: an adversarial search's candidate text was judged (docs/methods.md §6).

    ``cached`` calls reuse the reply of ``cached_from`` (same endpoint, model, parameters,
    prompt and sample index) and made no HTTP request.
    """

    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="calls")
    identity = models.CharField(max_length=120)
    item = models.ForeignKey(SourceItem, on_delete=models.CASCADE, related_name="+")
    perturbation = models.ForeignKey(
        Perturbation, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    criterion = models.ForeignKey(
        Criterion, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    metric = models.ForeignKey(
        Metric, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    candidate = models.ForeignKey(
        "judging.Candidate",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="calls",
        help_text="Adversarial search: the candidate text judged (not the item's texts).",
    )
    sample_index = models.PositiveSmallIntegerField(default=0)
    original_first = models.BooleanField(null=True, blank=True)

    request = models.JSONField(
        default=dict, blank=True, help_text="The HTTP body: model, messages, every parameter."
    )
    raw_response = models.TextField(blank=True)
    parse_status = models.CharField(
        max_length=10, choices=ParseStatus.choices, default=ParseStatus.PENDING
    )
    parse_reason = models.TextField(blank=True)
    score = models.FloatField(null=True, blank=True)
    verdict = models.CharField(max_length=3, blank=True)
    preferred = models.CharField(max_length=10, choices=Preferred.choices, blank=True)
    logprobs = models.JSONField(null=True, blank=True)
    format_retry = models.JSONField(
        null=True, blank=True, help_text="The second ask, with a format reminder, if made."
    )

    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    latency = models.FloatField(null=True, blank=True, help_text="Seconds, last HTTP attempt.")
    total_seconds = models.FloatField(null=True, blank=True, help_text="Waits and retries too.")
    attempts = models.PositiveSmallIntegerField(default=0)
    request_id = models.CharField(max_length=200, blank=True)
    system_fingerprint = models.CharField(max_length=200, blank=True)
    response_model = models.CharField(max_length=200, blank=True)
    finish_reason = models.CharField(max_length=40, blank=True)
    cache_key = models.CharField(max_length=64, blank=True)
    cached = models.BooleanField(default=False)
    cached_from = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    error_kind = models.CharField(max_length=20, blank=True)
    error = models.TextField(blank=True)
    previous_errors = models.JSONField(
        default=list, blank=True, help_text="Errors of earlier tries, when failed calls re-ran."
    )

    claimed_by = models.CharField(max_length=200, blank=True)
    claimed_until = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["run", "id"]
        constraints = [
            models.UniqueConstraint(fields=["run", "identity"], name="one_call_per_identity"),
            models.CheckConstraint(
                condition=Q(score__isnull=True) | Q(parse_status="parsed"),
                name="score_only_when_parsed",
            ),
        ]
        indexes = [
            models.Index(fields=["run", "parse_status", "id"]),
            models.Index(fields=["cache_key"]),
            models.Index(fields=["run", "finished_at"]),
        ]

    def __str__(self) -> str:
        return f"{self.run_id}/{self.identity}: {self.parse_status}"

    @property
    def reference_text(self) -> str:
        """What the text is compared with (metrics, ``{{reference}}``): the item's original;
        for an adversarial search's candidate, the item's ``metadata["reference"]`` when it
        has one (the original is then only the initial response R0)."""
        if self.candidate_id:
            given = (self.item.metadata or {}).get("reference")
            if isinstance(given, str) and given.strip():
                return given
        return self.item.original

    @property
    def target_text(self) -> str:
        if self.candidate_id:
            return self.candidate.text  # type: ignore[union-attr]
        return self.perturbation.text if self.perturbation_id else self.item.original  # type: ignore[union-attr]
