"""Progress: an annotator's own queue, and a study's progress for its researcher, in a fixed
number of aggregate queries (no per-row queries, whatever the study's size).

Every type of work contributes its figures and its per-person counts (selectors/work_counts.py,
`figures` and `done_by`); agreement is statistics, so the analysis app adds it where it shows
this (apps/analysis/progress.py), from each type's `agreement_rows`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.models import Count, Q

from apps.accounts.models import Role, User
from apps.annotation.kinds import AnnotatorProgress, annotator_progress, asks, work_types
from apps.annotation.models import (
    Comparison,
    ComparisonSlot,
    CriterionAssignment,
    ExpertVote,
    Outcome,
    Study,
    StudyMembership,
    StudyPerturbation,
    Verdict,
    Vetting,
)
from apps.annotation.selectors.work_counts import Figure, done_by
from apps.annotation.selectors.work_counts import figures as work_figures

__all__ = ["AnnotatorProgress", "StudyProgress", "annotator_progress", "study_progress"]


@dataclass
class AnnotatorRow:
    user_id: int
    username: str
    group: int | None = None
    criteria: int = 0
    #: Answers per type of work ({"vetting": 12, "comparison": 30}).
    done: dict[str, int] = field(default_factory=dict)
    verdicts: Counter[str] = field(default_factory=Counter)
    comparison_queue: int = 0
    last_active: datetime | None = None
    agreement: Any = None  # set by the analysis app (apps/analysis/progress.py)
    time: Any = None  # time on task, set by the analysis app (a PersonTime, or None)
    done_counts: list[int] = field(default_factory=list)  # in the order of the columns

    @property
    def vettings(self) -> int:
        return self.done.get("vetting", 0)

    @property
    def comparisons(self) -> int:
        return self.done.get("comparison", 0)

    @property
    def verdict_counts(self) -> list[int]:
        return [self.verdicts[v] for v in Verdict.values]

    def as_dict(self) -> dict[str, Any]:
        return {
            "username": self.username,
            "group": self.group,
            "criteria": self.criteria,
            "vettings": self.vettings,
            "comparisons": self.comparisons,
            "done": dict(self.done),
            "verdicts": dict(self.verdicts),
            "comparison_queue": self.comparison_queue,
            "last_active": self.last_active,
            "agreement": None if self.agreement is None else str(self.agreement),
            "time_on_task": None if self.time is None else self.time.as_dict(),
        }


@dataclass
class KindRow:
    name: str
    perturbations: int = 0
    decided: int = 0
    comparable: int = 0
    verdicts: Counter[str] = field(default_factory=Counter)
    outcomes: Counter[str] = field(default_factory=Counter)

    @property
    def verdict_counts(self) -> list[int]:
        return [self.verdicts[v] for v in Verdict.values]

    @property
    def outcome_counts(self) -> list[int]:
        return [self.outcomes[o] for o in Outcome.values]

    def as_dict(self) -> dict[str, Any]:
        return {
            **self.__dict__,
            "verdicts": dict(self.verdicts),
            "outcomes": dict(self.outcomes),
        }


@dataclass
class StudyProgress:
    figures: list[Figure]
    #: The annotators' types of work, in columns: [(slug, name)].
    columns: list[tuple[str, str]]
    annotators: list[AnnotatorRow]
    kinds: list[KindRow]
    experts: dict[str, int]
    time: Any = None  # time on task, set by the analysis app (a StudyTime)

    @property
    def counts(self) -> dict[str, int]:
        """Every figure by its key (`vettings`, `vetting_done`, `vetting_slots`...)."""
        out: dict[str, int] = {}
        for f in self.figures:
            out[f.key] = f.value
            if f.total_key:
                out[f.total_key] = f.total or 0
        return out

    def as_dict(self) -> dict[str, Any]:
        verdicts: Counter[str] = Counter()
        outcomes: Counter[str] = Counter()
        for kind in self.kinds:
            verdicts.update(kind.verdicts)
            outcomes.update(kind.outcomes)
        return {
            **self.counts,
            "verdicts": dict(verdicts),
            "outcomes": dict(outcomes),
            "experts": self.experts,
            "annotators": [row.as_dict() for row in self.annotators],
            "kinds": [row.as_dict() for row in self.kinds],
            "time_on_task": None if self.time is None else self.time.as_dict(),
        }


def study_progress(study: Study) -> StudyProgress:
    """Every type of work the study asks for: its figures, and each annotator's answers."""
    works = [work for work in work_types() if asks(work, study)]
    done = {work.slug: done_by(work, study) for work in works}
    plan = StudyPerturbation.objects.filter(study=study).aggregate(
        n=Count("id"), comparable=Count("id", filter=Q(comparable=True))
    )
    figures = [
        Figure("perturbations", "Perturbations", plan["n"], "perturbation-total"),
        Figure("comparable", "Comparable", plan["comparable"], "comparable-count"),
    ]
    for work in works:
        answers = sum(n for n, _ in done[work.slug].values())
        figures.extend(work_figures(work, study, answers))
    annotated = [work for work in works if work.role == Role.ANNOTATOR]
    annotators = _annotator_rows(study, {work.slug: done[work.slug] for work in annotated})
    experts = dict(
        ExpertVote.objects.filter(study=study)
        .values_list("expert__username")
        .annotate(n=Count("id"))
        .order_by("expert__username")
    )
    columns = [(work.slug, work.name) for work in annotated]
    for row in annotators.values():
        row.done_counts = [row.done.get(slug, 0) for slug, _ in columns]
    return StudyProgress(
        figures=figures,
        columns=columns,
        annotators=sorted(annotators.values(), key=lambda row: row.username),
        kinds=sorted(_kind_rows(study).values(), key=lambda row: row.name),
        experts=experts,
    )


def _annotator_rows(
    study: Study, done: dict[str, dict[int, tuple[int, datetime | None]]]
) -> dict[int, AnnotatorRow]:
    """{user id: row} of the study's annotators, and of anyone who annotated in it (`done`:
    each type of work's `done_by`)."""
    members = StudyMembership.objects.filter(study=study, role=Role.ANNOTATOR)
    rows: dict[int, AnnotatorRow] = {
        user_id: AnnotatorRow(user_id, username)
        for user_id, username in members.values_list("user_id", "user__username")
    }
    missing = set()
    for slug, by_person in done.items():
        for user_id, (n, last) in by_person.items():
            if user_id not in rows:
                rows[user_id] = AnnotatorRow(user_id, "")
                missing.add(user_id)
            row = rows[user_id]
            row.done[slug] = n
            row.last_active = max(filter(None, (row.last_active, last)), default=None)
    if missing:  # former members: their judgements stay in the counts
        for user_id, username in User.objects.filter(pk__in=missing).values_list("id", "username"):
            rows[user_id].username = username
    for user_id, verdict, n in (
        Vetting.objects.filter(study=study)
        .values_list("annotator_id", "verdict")
        .annotate(n=Count("id"))
        .order_by()
    ):
        rows[user_id].verdicts[verdict] += n
    for user_id, n in (
        ComparisonSlot.objects.filter(study=study, done_at__isnull=True, annotator__isnull=False)
        .values_list("annotator_id")
        .annotate(n=Count("id"))
        .order_by()
    ):
        if user_id in rows:
            rows[user_id].comparison_queue = n
    for user_id, group, n in (
        CriterionAssignment.objects.filter(study=study)
        .values_list("annotator_id", "group")
        .annotate(n=Count("id"))
        .order_by()
    ):
        if user_id in rows:
            rows[user_id].group, rows[user_id].criteria = group + 1, n
    return rows


def _kind_rows(study: Study) -> dict[int, KindRow]:
    rows: dict[int, KindRow] = {}
    for kind_id, name in study.kinds.values_list("id", "name"):
        rows[kind_id] = KindRow(name)
    for kind_id, name, verdict, comparable, n in (
        StudyPerturbation.objects.filter(study=study)
        .values_list("perturbation__kind_id", "perturbation__kind__name", "verdict", "comparable")
        .annotate(n=Count("id"))
        .order_by()
    ):
        row = rows.setdefault(kind_id, KindRow(name))
        row.perturbations += n
        row.decided += n if verdict else 0
        row.comparable += n if comparable else 0
    for kind_id, verdict, n in (
        Vetting.objects.filter(study=study)
        .values_list("perturbation__kind_id", "verdict")
        .annotate(n=Count("id"))
        .order_by()
    ):
        if kind_id in rows:
            rows[kind_id].verdicts[verdict] += n
    for kind_id, outcome, n in (
        Comparison.objects.filter(study=study)
        .values_list("perturbation__kind_id", "outcome")
        .annotate(n=Count("id"))
        .order_by()
    ):
        if kind_id in rows:
            rows[kind_id].outcomes[outcome] += n
    return dict(rows)
