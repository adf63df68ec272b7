"""Human judgements: vettings (methods §3), pairwise comparisons (§2), expert votes (§4), and the
history of every change to them."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import Q

from apps.annotation.models import base
from apps.annotation.models.study import Study
from apps.catalog.models import Criterion, Metric, PerturbationKind, Task
from apps.corpus.models import Perturbation, PerturbationVersion


class Verdict(models.TextChoices):
    VALID = "valid", "Valid"
    INVALID = "invalid", "Invalid"
    SCORE_INVARIANT = "score-invariant", "Score-invariant"
    NOT_RELEVANT = "not-relevant", "Not relevant"
    NOT_SURE = "not-sure", "Not sure"


#: Verdicts that let a perturbation feed comparisons and judge analyses.
ACCEPTED_VERDICTS = frozenset({Verdict.VALID, Verdict.SCORE_INVARIANT})


class Choice(models.TextChoices):
    """How the first text shown relates to the second."""

    A = "A", "First is better"
    B = "B", "First is worse"
    C = "C", "Both as good"
    D = "D", "Uncertain"


class Outcome(models.TextChoices):
    """The perturbed text relative to the original."""

    WORSE = "worse", "Perturbed is worse"
    SAME = "same", "Same"
    BETTER = "better", "Perturbed is better"
    UNCERTAIN = "uncertain", "Uncertain"


def outcome_of(choice: str, original_first: bool) -> str:
    """Normalise a choice about (first, second) to the perturbed text's outcome (methods §2)."""
    if choice == Choice.C:
        return Outcome.SAME
    if choice == Choice.D:
        return Outcome.UNCERTAIN
    first_better = choice == Choice.A
    # "first better" means "perturbed worse" when the original was shown first.
    return Outcome.WORSE if first_better == original_first else Outcome.BETTER


def original_shown_first(
    *, study_id: int, perturbation_id: int, criterion_id: int, user_id: int
) -> bool:
    """The recorded random order of a comparison's two texts: a fair coin, fixed per
    (study, pair, criterion, annotator), so a reload shows the same order."""
    seed = f"{study_id}:{perturbation_id}:{criterion_id}:{user_id}".encode()
    return hashlib.sha256(seed).digest()[0] % 2 == 0


def vetting_consensus(counts: Mapping[str, int], needed: int) -> str:
    """The verdict of a perturbation's vettings: the plurality once `needed` are in.

    Blank while fewer than `needed` vettings exist, and on a tie for the most votes (then
    nobody decided, and the perturbation is not offered for comparison).
    """
    total = sum(counts.values())
    if total == 0 or total < needed:
        return ""
    ranked = sorted(counts.values(), reverse=True)
    if len(ranked) > 1 and ranked[0] == ranked[1]:
        return ""
    return max(counts, key=lambda verdict: counts[verdict])


class Vetting(base.Judgement):
    """One annotator's verdict on one perturbation in a study."""

    perturbation = models.ForeignKey(Perturbation, on_delete=models.CASCADE, related_name="+")
    verdict = models.CharField(max_length=16, choices=Verdict.choices)
    note = models.TextField(blank=True)
    edited_version = models.ForeignKey(
        PerturbationVersion,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The annotator's own edit of the text, when they made one.",
    )

    judgement_kind = change_field = "vetting"
    judgement_label = "Vetting"
    unit_fields = ("perturbation",)
    answer_fields = ("verdict", "note", "edited_version")
    value_field = "verdict"

    class Meta:
        ordering = ["study", "created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["study", "perturbation", "annotator"], name="one_vetting_per_annotator"
            )
        ]
        indexes = [models.Index(fields=["study", "annotator", "created_at"])]

    def __str__(self) -> str:
        return f"{self.annotator_id} on {self.perturbation_id}: {self.verdict}"


class Comparison(base.Judgement):
    """One annotator's pairwise judgement of original vs perturbed under one criterion."""

    perturbation = models.ForeignKey(Perturbation, on_delete=models.CASCADE, related_name="+")
    criterion = models.ForeignKey(Criterion, on_delete=models.PROTECT, related_name="+")
    group = models.PositiveSmallIntegerField()
    original_first = models.BooleanField(help_text="Was the original shown as the first text?")
    choice = models.CharField(max_length=1, choices=Choice.choices)
    outcome = models.CharField(max_length=10, choices=Outcome.choices)

    judgement_kind = change_field = "comparison"
    judgement_label = "Comparison"
    unit_fields = ("perturbation", "criterion")
    answer_fields = ("group", "original_first", "choice", "outcome")
    value_field = "outcome"

    class Meta:
        ordering = ["study", "created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["study", "perturbation", "criterion", "annotator"],
                name="one_comparison_per_annotator",
            ),
            models.CheckConstraint(
                condition=Q(outcome="same", choice="C")
                | Q(outcome="uncertain", choice="D")
                | Q(outcome="worse", choice="A", original_first=True)
                | Q(outcome="worse", choice="B", original_first=False)
                | Q(outcome="better", choice="B", original_first=True)
                | Q(outcome="better", choice="A", original_first=False),
                name="comparison_outcome_follows_choice",
            ),
        ]
        indexes = [models.Index(fields=["study", "annotator", "created_at"])]

    def __str__(self) -> str:
        return f"{self.annotator_id} on {self.perturbation_id}/{self.criterion_id}: {self.outcome}"


class ExpertVote(base.Judgement):
    """An expert's choice of the metric of `task` most affected by perturbation `kind`."""

    annotator = None  # type: ignore[assignment]
    expert = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="expert_votes"
    )
    task = models.ForeignKey(Task, on_delete=models.PROTECT, related_name="+")
    kind = models.ForeignKey(PerturbationKind, on_delete=models.PROTECT, related_name="+")
    metric = models.ForeignKey(Metric, on_delete=models.PROTECT, related_name="+")

    judgement_kind, change_field = "expert-vote", "expert_vote"
    judgement_label = "Expert vote"
    unit_fields = ("task", "kind")
    answer_fields = ("metric",)
    value_field = "metric"
    person_field = "expert"

    class Meta:
        ordering = ["study", "task", "kind"]
        constraints = [
            models.UniqueConstraint(
                fields=["study", "expert", "task", "kind"], name="one_vote_per_expert"
            )
        ]

    def __str__(self) -> str:
        return f"{self.expert_id}: {self.kind_id} hurts {self.metric_id}"


#: Time on task, as a work page measures it (static/annotation.js) and every submit may carry it.
ACTIVE_HELP = (
    "Time on task: the seconds the person was active on the unit (the page visible, with a "
    "key, click or scroll in the last minute) before this save."
)
#: The most time on task one save may carry (a day): more is a client's error, refused.
MOST_ACTIVE_SECONDS = 86400


class JudgementChange(models.Model):
    """Every save of a judgement, with what it was before and after.

    The idempotency key of the submit that made the change is unique: a repeated or retried
    submit finds its change here and is answered without saving again.
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="judgement_changes")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    judgement = models.CharField(max_length=12, choices=base.judgement_choices)
    idempotency_key = models.UUIDField(unique=True)
    before = models.JSONField(null=True, blank=True, help_text="Empty when the save created it.")
    after = models.JSONField()
    active_seconds = models.FloatField(
        null=True,
        blank=True,
        help_text=f"{ACTIVE_HELP} Empty when the client did not send it.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"{self.judgement} change by {self.user_id} ({self.idempotency_key})"

    @classmethod
    def of(
        cls,
        judgement: base.Judgement,
        *,
        user: Any,
        key: uuid.UUID,
        before: dict[str, Any] | None,
        after: dict[str, Any],
        active_seconds: float | None = None,
    ) -> JudgementChange:
        """`record`'s change, not saved yet."""
        return cls(
            study_id=judgement.study_id,
            user=user,
            judgement=judgement.judgement_kind,
            idempotency_key=key,
            before=before,
            after=after,
            active_seconds=active_seconds,
            **{judgement.change_field: judgement},
        )

    @property
    def target(self) -> base.Judgement:
        """The judgement this change saved, whatever its type."""
        fields = {model.judgement_kind: model.change_field for model in base.judgement_types()}
        return getattr(self, fields[self.judgement])

    @property
    def target_id(self) -> int | None:
        fields = {model.judgement_kind: model.change_field for model in base.judgement_types()}
        return getattr(self, f"{fields[self.judgement]}_id")


def judgement_version(judgement: base.Judgement | None) -> int:
    """The answer's version: the id of its latest change (0: no answer yet). A form carries
    it (`based_on`), so a save from a stale tab is refused rather than silently applied."""
    if judgement is None:
        return 0
    changes = getattr(judgement, "changes")  # noqa: B009 (the reverse of each type's link)
    return changes.order_by("-id").values_list("id", flat=True).first() or 0
