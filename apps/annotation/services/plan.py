"""A study's plan: its perturbations in a shuffled work order, k vetting slots each, the
criteria design (methods §2) and one comparison slot per comparable pair x (group, criterion).

`study_plan_build` is safe to run again: it brings the plan up to date with the study's
datasets, kinds, criteria, members and settings, keeping every judgement and every slot that
is done or held.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice

from django.db import transaction
from django.db.models import Count, Exists, Max, OuterRef, Q, Subquery
from django.utils import timezone

from apps.accounts.models import Role
from apps.annotation.design import CriterionSpec, PlanError, criteria_plan
from apps.annotation.models import (
    ACCEPTED_VERDICTS,
    ComparisonSlot,
    CriterionAssignment,
    Study,
    StudyMembership,
    StudyPerturbation,
    Vetting,
    VettingSlot,
    vetting_consensus,
)
from apps.corpus.models import Perturbation

BATCH = 2000
#: Plans for more perturbations than this are built by the worker, not in the request.
PLAN_INLINE_LIMIT = 5000


def _batched(rows: Iterable[tuple[int, int]], size: int = BATCH) -> Iterator[list[tuple[int, int]]]:
    it = iter(rows)
    while chunk := list(islice(it, size)):
        yield chunk


@dataclass(frozen=True)
class PlanSummary:
    perturbations: int
    vetting_slots: int
    criterion_assignments: int
    comparison_slots: int
    problem: str


def study_plan_request(*, study: Study) -> PlanSummary | None:
    """Build the plan now when the study is small; otherwise hand it to the worker (on
    commit) and return None. The study's `plan_queued_at` says a build is under way."""
    size = Perturbation.objects.filter(
        item__dataset__in=study.datasets.all(), kind__in=study.kinds.all()
    ).count()
    if size <= PLAN_INLINE_LIMIT:
        return study_plan_build(study=study)
    from workers.tasks.annotation import build_study_plan

    Study.objects.filter(pk=study.pk).update(plan_queued_at=timezone.now())
    transaction.on_commit(lambda: build_study_plan.delay(study.pk))
    return None


@transaction.atomic
def study_plan_build(*, study: Study) -> PlanSummary:
    """Bring the study's plan up to date (see the module docstring)."""
    study = Study.objects.select_for_update().get(pk=study.pk)  # one build at a time
    _perturbations_sync(study)
    _vetting_slots_sync(study)
    problem = _criteria_design_sync(study)
    comparable_refresh(study=study)
    comparison_slots_sync(study=study)
    study.plan_built_at = timezone.now()
    study.plan_problem = problem
    study.plan_queued_at = None
    study.save(update_fields=["plan_built_at", "plan_problem", "plan_queued_at"])
    return PlanSummary(
        perturbations=StudyPerturbation.objects.filter(study=study).count(),
        vetting_slots=VettingSlot.objects.filter(study=study).count(),
        criterion_assignments=CriterionAssignment.objects.filter(study=study).count(),
        comparison_slots=ComparisonSlot.objects.filter(study=study).count(),
        problem=problem,
    )


def _perturbations_sync(study: Study) -> None:
    wanted = set(
        Perturbation.objects.filter(
            item__dataset__in=study.datasets.all(), kind__in=study.kinds.all()
        ).values_list("id", flat=True)
    )
    have = set(
        StudyPerturbation.objects.filter(study=study).values_list("perturbation_id", flat=True)
    )
    gone = have - wanted
    if gone:
        StudyPerturbation.objects.filter(study=study, perturbation_id__in=gone).delete()
        VettingSlot.objects.filter(
            study=study, perturbation_id__in=gone, done_at__isnull=True
        ).delete()
        ComparisonSlot.objects.filter(
            study=study, perturbation_id__in=gone, done_at__isnull=True
        ).delete()
    new = sorted(wanted - have)
    start = (
        StudyPerturbation.objects.filter(study=study).aggregate(top=Max("position"))["top"] or 0
    ) + 1
    random.Random(f"{study.pk}:{start}").shuffle(new)
    StudyPerturbation.objects.bulk_create(
        (
            StudyPerturbation(study=study, perturbation_id=pid, position=start + i)
            for i, pid in enumerate(new)
        ),
        batch_size=BATCH,
    )


def _vetting_slots_sync(study: Study) -> None:
    """k slots per perturbation; surplus slots (k was lowered) go if nobody holds them."""
    k = study.vetting_overlap
    now = timezone.now()
    VettingSlot.objects.filter(study=study, slot__gte=k, done_at__isnull=True).filter(
        Q(annotator__isnull=True) | Q(leased_until__lt=now)
    ).delete()
    full = (
        VettingSlot.objects.filter(study=study, slot__lt=k)
        .values("perturbation_id")
        .annotate(n=Count("id"))
        .filter(n=k)
        .values_list("perturbation_id", flat=True)
    )
    missing = StudyPerturbation.objects.filter(study=study).exclude(perturbation_id__in=full)
    for chunk in _batched(missing.values_list("perturbation_id", "position").iterator()):
        pids = [pid for pid, _ in chunk]
        have = set(
            VettingSlot.objects.filter(study=study, perturbation_id__in=pids).values_list(
                "perturbation_id", "slot"
            )
        )
        VettingSlot.objects.bulk_create(
            VettingSlot(study=study, perturbation_id=pid, slot=s, position=pos)
            for pid, pos in chunk
            for s in range(k)
            if (pid, s) not in have
        )


def _criteria_design_sync(study: Study) -> str:
    """Persist the criteria design; on a design that cannot be met, keep the old one and
    return why."""
    annotators = list(
        StudyMembership.objects.filter(study=study, role=Role.ANNOTATOR)
        .order_by("id")
        .values_list("user_id", flat=True)
    )
    specs = [
        CriterionSpec(id=cid, aspect=aspect, description_type=dtype)
        for cid, aspect, dtype in study.criteria.order_by("id").values_list(
            "id", "aspect_id", "description_type"
        )
    ]
    if not specs:
        CriterionAssignment.objects.filter(study=study).delete()
        return ""
    try:
        shares = criteria_plan(
            annotators=annotators, groups=study.comparison_groups, criteria=specs
        )
    except PlanError as exc:
        return str(exc)
    CriterionAssignment.objects.filter(study=study).delete()
    CriterionAssignment.objects.bulk_create(
        CriterionAssignment(study=study, annotator_id=s.annotator, group=s.group, criterion_id=c)
        for s in shares
        for c in s.criteria
    )
    return ""


def comparable_refresh(*, study: Study, perturbation_ids: Sequence[int] | None = None) -> list[int]:
    """Recompute the vetting verdict of perturbations and whether they may be compared;
    return the perturbations whose verdict or comparability changed."""
    rows = StudyPerturbation.objects.filter(study=study)
    vettings = Vetting.objects.filter(study=study)
    if perturbation_ids is not None:
        rows = rows.filter(perturbation_id__in=perturbation_ids)
        vettings = vettings.filter(perturbation_id__in=perturbation_ids)
    counts: dict[int, dict[str, int]] = defaultdict(dict)
    for pid, verdict, n in vettings.values_list("perturbation_id", "verdict").annotate(
        n=Count("id")
    ):
        counts[pid][verdict] = n
    changed = []
    rows = rows.only("id", "perturbation_id", "verdict", "comparable")
    for row in rows.iterator() if perturbation_ids is None else rows:
        verdict = vetting_consensus(counts.get(row.perturbation_id, {}), study.vetting_overlap)
        comparable = verdict in ACCEPTED_VERDICTS or not study.comparisons_need_vetting
        if (verdict, comparable) != (row.verdict, row.comparable):
            row.verdict, row.comparable = verdict, comparable
            changed.append(row)
    StudyPerturbation.objects.bulk_update(changed, ["verdict", "comparable"], batch_size=BATCH)
    return [row.perturbation_id for row in changed]


def comparable_refresh_one(*, study: Study, row: StudyPerturbation) -> bool:
    """`comparable_refresh` for one (locked) plan row; True when it changed."""
    counts = dict(
        Vetting.objects.filter(study=study, perturbation_id=row.perturbation_id)
        .values_list("verdict")
        .annotate(n=Count("id"))
        .order_by()
    )
    verdict = vetting_consensus(counts, study.vetting_overlap)
    comparable = verdict in ACCEPTED_VERDICTS or not study.comparisons_need_vetting
    if (verdict, comparable) == (row.verdict, row.comparable):
        return False
    row.verdict, row.comparable = verdict, comparable
    row.save(update_fields=["verdict", "comparable"])
    return True


def comparison_slots_sync(*, study: Study, perturbation_ids: Iterable[int] | None = None) -> None:
    """One slot per comparable perturbation x (group, criterion) of the design, owned by that
    criterion's annotator in that group. Slots not done follow the current design; slots no
    longer wanted go unless done."""
    slots = ComparisonSlot.objects.filter(study=study, done_at__isnull=True)
    plan = CriterionAssignment.objects.filter(study=study)
    comparable = StudyPerturbation.objects.filter(study=study, comparable=True)
    if perturbation_ids is not None:
        ids = list(perturbation_ids)
        slots = slots.filter(perturbation_id__in=ids)
        comparable = comparable.filter(perturbation_id__in=ids)
    in_plan = plan.filter(group=OuterRef("group"), criterion=OuterRef("criterion"))
    is_comparable = StudyPerturbation.objects.filter(
        study=study, perturbation=OuterRef("perturbation"), comparable=True
    )
    slots.exclude(Exists(in_plan) & Exists(is_comparable)).delete()
    owner = Subquery(in_plan.values("annotator")[:1])
    slots.exclude(annotator=owner).update(annotator=owner)
    design = list(plan.values_list("group", "criterion_id", "annotator_id"))
    if not design:
        return
    for chunk in _batched(comparable.values_list("perturbation_id", "position").iterator()):
        pids = [pid for pid, _ in chunk]
        have = set(
            ComparisonSlot.objects.filter(study=study, perturbation_id__in=pids).values_list(
                "perturbation_id", "criterion_id", "group"
            )
        )
        ComparisonSlot.objects.bulk_create(
            (
                ComparisonSlot(
                    study=study,
                    perturbation_id=pid,
                    criterion_id=cid,
                    group=group,
                    position=pos,
                    annotator_id=annotator,
                )
                for pid, pos in chunk
                for group, cid, annotator in design
                if (pid, cid, group) not in have
            ),
            batch_size=BATCH,
        )
