"""What a report card reads of one audit subject, in bulk (docs/cards.md).

A subject's evidence is its parts (``AuditPart``): each an ordinary judge run, an
adversarial search, or a reason it was skipped. Runs are read once each with the report
code's bulk readers (``judge_data.run_scores``); nothing here computes a statistic.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, TypeVar

from django.urls import reverse

from apps.analysis.reports.adversarial import SearchOutcome, search_outcome
from apps.analysis.reports.judge_data import RunScores, run_scores
from apps.judging.models import AdversarialSearch, JudgeCall, JudgeRun, ParseStatus, RunStatus
from apps.judging.models.audit import AuditPart, AuditSubject, PartKind

T = TypeVar("T")


def run_link(run: JudgeRun | int) -> str:
    """The run's page: its calls, each with the request and the raw reply."""
    return reverse("judging-run-detail", kwargs={"pk": getattr(run, "pk", run)})


def calls_link(run: JudgeRun | int) -> str:
    """Every call of the run as CSV (texts, prompts, replies, scores)."""
    pk = getattr(run, "pk", run)
    return reverse("judging-run-export", kwargs={"pk": pk, "file_format": "csv"})


def search_link(search: AdversarialSearch | int) -> str:
    return reverse("judging-search-detail", kwargs={"pk": getattr(search, "pk", search)})


def perturbation_link(perturbation_id: int) -> str:
    """The perturbed text with its original (the API's perturbation)."""
    return f"/api/v1/perturbations/{perturbation_id}/"


@dataclass
class SubjectEvidence:
    """One subject's parts, by kind, with each run's scores read once."""

    subject: AuditSubject
    parts: dict[str, AuditPart] = field(default_factory=dict)
    _scores: dict[int, RunScores] = field(default_factory=dict)
    _memo: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, subject: AuditSubject) -> SubjectEvidence:
        parts = AuditPart.objects.filter(subject=subject).select_related(
            "run__judge",
            "run__strategy",
            "run__study",
            "baseline__judge",
            "baseline__strategy",
            "search",
        )
        return cls(subject, {p.part: p for p in parts})

    @property
    def label(self) -> str:
        return str(self.subject)

    def run(self, kind: str) -> JudgeRun | None:
        part = self.parts.get(kind)
        return part.run if part is not None else None

    def search(self) -> AdversarialSearch | None:
        part = self.parts.get(PartKind.ADVERSARIAL)
        return part.search if part is not None else None

    def outcome(self) -> SearchOutcome | None:
        """The adversarial search's counts: items with a result, generator replies read."""
        search = self.search()
        if search is None:
            return None
        return self.memo("outcome", lambda: search_outcome(search))

    def scores(self, kind: str) -> RunScores | None:
        run = self.run(kind)
        if run is None:
            return None
        if run.pk not in self._scores:
            self._scores[run.pk] = run_scores(run)
        return self._scores[run.pk]

    def memo(self, name: str, compute: Callable[[], T]) -> T:
        """``compute()`` once per card: what several of its lines read (the discernment
        section's p-values, say) is worked out once."""
        if name not in self._memo:
            self._memo[name] = compute()
        return self._memo[name]

    @cached_property
    def runs(self) -> list[JudgeRun]:
        """Every run of the subject's parts (baselines too), each once."""
        found = {r.pk: r for p in self.parts.values() for r in (p.run, p.baseline) if r}
        return list(found.values())

    def never_varies(self, kind: str) -> str:
        """Why the part's replies cannot move a figure, or "" when they can: every reply the
        same score, or every pairwise verdict a tie (such a judge tells no text from
        another; one that always prefers the original does)."""
        part = self.parts.get(kind)
        runs = [r for r in (part.run, part.baseline) if r is not None] if part else []
        if not runs:
            return ""
        if kind == PartKind.FBI_PAIRWISE:
            seen = self.memo(f"still:{kind}", lambda: _answers(runs, "preferred"))
            return "its verdicts never vary: every pair was a tie" if seen == {"tie"} else ""
        seen = self.memo(f"still:{kind}", lambda: _answers(runs, "score"))
        if len(seen) != 1:
            return ""
        return f"its scores never vary: every reply gave the score {next(iter(seen)):g}"

    def left_out(self, kind: str) -> str:
        """What the part's run left out and why (e.g. perturbations not vetted), or ""."""
        part = self.parts.get(kind)
        run = part.run if part is not None else None
        if run is None or not run.problems:
            return ""
        problems = run.problems
        return "; ".join(f"{p.get('count', 0)} left out: {p.get('reason', '')}" for p in problems)

    def state(self, kind: str) -> tuple[str, str]:
        """("not measured" or "no result", why) for a part that gives no figure; ("", "")
        for a part that ran to its end. A failed run is "no result": it ran, and nothing it
        produced can be read as a figure."""
        why = self.missing(kind)
        if not why:
            return "", ""
        part = self.parts.get(kind)
        failed = part is not None and any(
            thing is not None and thing.status == RunStatus.FAILED
            for thing in (part.run, part.search)
        )
        return ("no result" if failed else "not measured"), why

    def missing(self, kind: str) -> str:
        """Why a part gives no figure (empty when it should): skipped, not run, or unfinished."""
        part = self.parts.get(kind)
        label = PartKind(kind).label
        if part is None:
            return f"{label}: not part of this audit."
        if part.skipped_reason:
            return f"{label}: skipped, {part.skipped_reason}."
        if part.run is None and part.search is None:
            return f"{label}: nothing was run."
        if part.run is not None and part.run.status != RunStatus.DONE:
            run = part.run
            state = f"{run.get_status_display().lower()}, {run.completed}/{run.total} calls"
            if run.error:
                state += f": {run.error}"
            return f"{label}: run {run.pk} is {state}."
        search = part.search
        if search is not None and search.status != RunStatus.DONE:
            state = search.get_status_display().lower()
            return f"{label}: search {search.pk} is {state}" + (
                f": {search.error}." if search.error else "."
            )
        return ""


def _answers(runs: list[JudgeRun], column: str) -> set[Any]:
    """The distinct answers (two at most: enough to tell) of the runs' readable replies."""
    parsed = JudgeCall.objects.filter(run__in=runs, parse_status=ParseStatus.PARSED)
    return set(parsed.order_by().values_list(column, flat=True).distinct()[:2])
