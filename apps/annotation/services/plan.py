"""A study's plan: its perturbations in a shuffled work order, then each type of work's slots
(`Setup.plan`): k vetting slots per perturbation, the criteria design (methods §2) and one
comparison slot per comparable pair x (group, criterion), direct assessment's texts.

`study_plan_build` is safe to run again: it brings the plan up to date with the study's
datasets, kinds, criteria, members and settings, keeping every judgement and every slot that
is done or held.
"""

from __future__ import annotations

import functools
import random
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from django.db import transaction
from django.db.models import Count, Exists, Max, OuterRef, Subquery
from django.utils import timezone

from apps import sql_rows as plain
from apps.accounts.models import Role
from apps.annotation.design import CriterionSpec, PlanError, criteria_plan
from apps.annotation.kinds import work_types
from apps.annotation.models import (
    ACCEPTED_VERDICTS,
    ComparisonSlot,
    CriterionAssignment,
    PanelSeat,
    Study,
    StudyMembership,
    StudyPerturbation,
    Vetting,
    VettingSlot,
    vetting_consensus,
)
from apps.annotation.services.leases import BATCH, batched
from apps.corpus.models import Perturbation

#: Plans for more perturbations than this are built by the worker, not in the request.
PLAN_INLINE_LIMIT = 5000


@dataclass(frozen=True)
class PlanSummary:
    perturbations: int
    criterion_assignments: int
    problem: str
    #: Slots per type of work ({"vetting": 8, "comparison": 24}).
    slots: dict[str, int] = field(default_factory=dict)

    @property
    def vetting_slots(self) -> int:
        return self.slots.get("vetting", 0)

    @property
    def comparison_slots(self) -> int:
        return self.slots.get("comparison", 0)

    def as_dict(self) -> dict[str, object]:
        """The API's answer: counts, with one `<work>_slots` per type of work."""
        flat = {f"{slug}_slots": n for slug, n in self.slots.items()}
        return {
            "perturbations": self.perturbations,
            **flat,
            "criterion_assignments": self.criterion_assignments,
            "problem": self.problem,
        }

    def describe(self) -> str:
        """ "3 perturbations, 6 vetting slots, 12 comparison slots"."""
        parts = [f"{n} {slug} slots" for slug, n in self.slots.items()]
        return ", ".join([f"{self.perturbations} perturbations", *parts])


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
    parts = {work.slug: work.setup.plan(work, study=study) for work in work_types()}
    slots = {slug: part.slots for slug, part in parts.items() if part is not None}
    problem = " ".join(part.problem for part in parts.values() if part and part.problem)
    study.plan_built_at = timezone.now()
    study.plan_problem = problem
    study.plan_queued_at = None
    study.save(update_fields=["plan_built_at", "plan_problem", "plan_queued_at"])
    return PlanSummary(
        perturbations=StudyPerturbation.objects.filter(study=study).count(),
        criterion_assignments=CriterionAssignment.objects.filter(study=study).count(),
        problem=problem,
        slots=slots,
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


def criteria_design_sync(study: Study) -> str:
    """Persist the criteria design; on a design that cannot be met, keep the old one and
    return why."""
    # Recruited participants are in the design through a seat of a group alone (services/
    # panel.py): the study-wide link's do pooled work, and never take criteria from others.
    members = StudyMembership.objects.filter(study=study, role=Role.ANNOTATOR).exclude(
        user__role=Role.PARTICIPANT, user__panel_seat__isnull=True
    )
    annotators = list(members.order_by("id").values_list("user_id", flat=True))
    specs = [
        CriterionSpec(id=cid, aspect=aspect, description_type=dtype)
        for cid, aspect, dtype in study.criteria.order_by("id").values_list(
            "id", "aspect_id", "description_type"
        )
    ]
    if not specs:
        CriterionAssignment.objects.filter(study=study).delete()
        return ""
    # A recruited panel's seats are in their group (services/panel.py).
    placed = dict(PanelSeat.objects.filter(study=study).values_list("user_id", "group"))
    try:
        shares = criteria_plan(
            annotators=annotators, groups=study.comparison_groups, criteria=specs, placed=placed
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


def comparable_refresh_one(
    *,
    study: Study,
    row: StudyPerturbation,
    counts: dict[str, int] | None = None,
    slots: bool = False,
) -> bool:
    """`comparable_refresh` for one (locked) plan row; True when it changed. `counts`: the
    perturbation's verdicts, when the caller counted them already. `slots`: when it changed,
    the perturbation's comparison slots follow (`comparison_slots_sync`); on PostgreSQL in the
    same statement as the row (the third verdict on a text, a third of a study's vettings)."""
    if counts is None:  # after every vetting: statements written once (apps/sql_rows.py)
        counts = dict(plain.fetch(_CONSENSUS, [study.pk, row.perturbation_id]))
    verdict = vetting_consensus(counts, study.vetting_overlap)
    comparable = verdict in ACCEPTED_VERDICTS or not study.comparisons_need_vetting
    if (verdict, comparable) == (row.verdict, row.comparable):
        return False
    row.verdict, row.comparable = verdict, comparable
    values = {"verdict": verdict, "comparable": comparable, "row": row.pk}
    if slots and plain.chained():  # the row and the text's slots in one statement
        where = {"study": study.pk, "perturbation": row.perturbation_id}
        plain.execute(_refreshed_with_slots(), {**values, **where})
        return True
    plain.execute(_REFRESHED, values)
    if slots:
        comparison_slots_sync(study=study, perturbation_ids=[row.perturbation_id])
    return True


_CONSENSUS = (
    f"SELECT verdict, count(*) FROM {plain.table(Vetting)} WHERE study_id = %s "
    "AND perturbation_id = %s AND control_id IS NULL GROUP BY verdict"
)
_REFRESHED = (
    f"UPDATE {plain.table(StudyPerturbation)} SET verdict = %(verdict)s, "
    "comparable = %(comparable)s WHERE id = %(row)s"
)


@functools.cache
def _refreshed_with_slots() -> str:
    """The plan row's verdict, and its perturbation's comparison slots as
    `comparison_slots_sync` leaves them, in one statement: open slots the design no longer
    wants (or all, when the text is no longer comparable) go, the others go to the design's
    annotator, and a comparable text gets the slots it lacks (done ones are kept)."""
    slots, design = plain.table(ComparisonSlot), plain.table(CriterionAssignment)
    mine = "s.study_id = %(study)s AND s.perturbation_id = %(perturbation)s AND s.done_at IS NULL"
    wanted = 'd."group" = s."group" AND d.criterion_id = s.criterion_id'
    return (
        f"WITH refreshed AS ({_REFRESHED} RETURNING position), "
        f'design AS (SELECT "group", criterion_id, annotator_id FROM {design} '
        "WHERE study_id = %(study)s), "
        f"gone AS (DELETE FROM {slots} s WHERE {mine} AND NOT (%(comparable)s "
        f"AND EXISTS (SELECT 1 FROM design d WHERE {wanted}))), "
        f"moved AS (UPDATE {slots} s SET annotator_id = d.annotator_id FROM design d "
        f"WHERE %(comparable)s AND {mine} AND {wanted} "
        "AND s.annotator_id IS DISTINCT FROM d.annotator_id) "
        f'INSERT INTO {slots} (study_id, perturbation_id, criterion_id, "group", position, '
        "annotator_id, skipped, done_at) "
        'SELECT %(study)s, %(perturbation)s, d.criterion_id, d."group", r.position, '
        "d.annotator_id, false, NULL FROM design d, refreshed r WHERE %(comparable)s "
        f"AND NOT EXISTS (SELECT 1 FROM {slots} x WHERE x.study_id = %(study)s "
        "AND x.perturbation_id = %(perturbation)s AND x.criterion_id = d.criterion_id "
        'AND x."group" = d."group") ON CONFLICT DO NOTHING'
    )


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
    for chunk in batched(comparable.values_list("perturbation_id", "position").iterator()):
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
