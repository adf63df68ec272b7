"""Progress: an annotator's own queue, and a study's progress for its researcher, in a fixed
number of aggregate queries (no per-row queries, whatever the study's size)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from importlib import import_module
from importlib.util import find_spec
from typing import Any

from django.core.cache import cache
from django.db.models import Count, Max, Q
from django.utils import timezone

from apps.accounts.models import Role
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
    VettingSlot,
)

#: The analysis app may provide `annotator_agreement(study_id) -> {user_id: figure}` in this
#: module (figure: anything with a readable str(), e.g. "alpha 0.62 (n=140)"). Until it does, the
#: progress page shows counts only.
AGREEMENT_HOOK = "apps.analysis.annotation_agreement"
STUDY_COUNTS_SECONDS = 10


@dataclass
class AnnotatorProgress:
    vetted: int
    vetting_open: int
    vetting_total: int
    compared: int
    comparison_queue: int


def annotator_progress(study: Study, annotator, *, fresh: bool = False) -> AnnotatorProgress:
    """What an annotator sees of their queue: their counts and the work left.

    The study-wide slot counts scan every slot, so they are shared for `STUDY_COUNTS_SECONDS`
    (each page shows them; a few seconds' staleness does not matter there). `fresh` counts
    now: beside "Nothing left", stale counts would contradict the message."""
    slots = _study_slot_counts(study, fresh=fresh)
    return AnnotatorProgress(
        vetted=Vetting.objects.filter(study=study, annotator=annotator).count(),
        vetting_open=slots["open"],
        vetting_total=slots["total"],
        compared=Comparison.objects.filter(study=study, annotator=annotator).count(),
        comparison_queue=ComparisonSlot.objects.filter(
            study=study, annotator=annotator, done_at__isnull=True
        ).count(),
    )


def _study_slot_counts(study: Study, *, fresh: bool = False) -> dict[str, int]:
    key = f"annotation:vetting-slots:{study.pk}"
    counts = None if fresh else cache.get(key)
    if counts is None:
        counts = VettingSlot.objects.filter(study=study).aggregate(
            total=Count("id"), open=Count("id", filter=Q(done_at__isnull=True))
        )
        cache.set(key, counts, STUDY_COUNTS_SECONDS)
    return counts


@dataclass
class AnnotatorRow:
    username: str
    group: int | None = None
    criteria: int = 0
    vettings: int = 0
    verdicts: Counter[str] = field(default_factory=Counter)
    comparisons: int = 0
    comparison_queue: int = 0
    last_active: datetime | None = None
    agreement: Any = None

    @property
    def verdict_counts(self) -> list[int]:
        return [self.verdicts[v] for v in Verdict.values]


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


@dataclass
class StudyProgress:
    perturbations: int
    comparable: int
    vetting_slots: int
    vetting_done: int
    vetting_leased: int
    comparison_slots: int
    comparison_done: int
    vettings: int
    comparisons: int
    verdicts: Counter[str]
    outcomes: Counter[str]
    annotators: list[AnnotatorRow]
    kinds: list[KindRow]
    experts: dict[str, int]
    votes: int


def study_progress(study: Study) -> StudyProgress:
    now = timezone.now()
    plan = StudyPerturbation.objects.filter(study=study).aggregate(
        n=Count("id"), comparable=Count("id", filter=Q(comparable=True))
    )
    vslots = VettingSlot.objects.filter(study=study).aggregate(
        n=Count("id"),
        done=Count("id", filter=Q(done_at__isnull=False)),
        leased=Count("id", filter=Q(done_at__isnull=True, leased_until__gte=now)),
    )
    cslots = ComparisonSlot.objects.filter(study=study).aggregate(
        n=Count("id"), done=Count("id", filter=Q(done_at__isnull=False))
    )
    annotators = _annotator_rows(study)
    kinds = _kind_rows(study)
    verdicts: Counter[str] = Counter()
    outcomes: Counter[str] = Counter()
    for kind in kinds.values():
        verdicts.update(kind.verdicts)
        outcomes.update(kind.outcomes)
    experts = dict(
        ExpertVote.objects.filter(study=study)
        .values_list("expert__username")
        .annotate(n=Count("id"))
        .order_by("expert__username")
    )
    return StudyProgress(
        perturbations=plan["n"],
        comparable=plan["comparable"],
        vetting_slots=vslots["n"],
        vetting_done=vslots["done"],
        vetting_leased=vslots["leased"],
        comparison_slots=cslots["n"],
        comparison_done=cslots["done"],
        vettings=sum(verdicts.values()),
        comparisons=sum(outcomes.values()),
        verdicts=verdicts,
        outcomes=outcomes,
        annotators=sorted(annotators.values(), key=lambda row: row.username),
        kinds=sorted(kinds.values(), key=lambda row: row.name),
        experts=experts,
        votes=sum(experts.values()),
    )


def _annotator_rows(study: Study) -> dict[int, AnnotatorRow]:
    rows: dict[int, AnnotatorRow] = {
        user_id: AnnotatorRow(username)
        for user_id, username in StudyMembership.objects.filter(
            study=study, role=Role.ANNOTATOR
        ).values_list("user_id", "user__username")
    }
    for user_id, username, verdict, n, last in (
        Vetting.objects.filter(study=study)
        .values_list("annotator_id", "annotator__username", "verdict")
        .annotate(n=Count("id"), last=Max("updated_at"))
        .order_by()
    ):
        row = rows.setdefault(user_id, AnnotatorRow(username))
        row.vettings += n
        row.verdicts[verdict] += n
        row.last_active = max(filter(None, (row.last_active, last)), default=None)
    for user_id, username, n, last in (
        Comparison.objects.filter(study=study)
        .values_list("annotator_id", "annotator__username")
        .annotate(n=Count("id"), last=Max("updated_at"))
        .order_by()
    ):
        row = rows.setdefault(user_id, AnnotatorRow(username))
        row.comparisons = n
        row.last_active = max(filter(None, (row.last_active, last)), default=None)
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
    for user_id, figure in annotator_agreement(study).items():
        if user_id in rows:
            rows[user_id].agreement = figure
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


def annotator_agreement(study: Study) -> Mapping[int, Any]:
    """Each annotator's agreement with the others, from the analysis app's `AGREEMENT_HOOK`
    when it provides one; an empty mapping until then (the page shows counts meanwhile)."""
    if find_spec(AGREEMENT_HOOK.rsplit(".", 1)[0]) is None or find_spec(AGREEMENT_HOOK) is None:
        return {}
    return import_module(AGREEMENT_HOOK).annotator_agreement(study.pk)
