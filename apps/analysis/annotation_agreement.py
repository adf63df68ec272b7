"""Each annotator's agreement with the others, for the study progress page.

Over every annotator's type of work (vettings: unit perturbation; comparisons: perturbation x
criterion; direct assessments: text x criterion), the share of an annotator's answers that
match the plurality of the other annotators on that unit. The rows come from each type's
`agreement_rows` (apps/annotation/selectors/work_counts.py).
"""

from __future__ import annotations

from apps.accounts.models import Role
from apps.analysis.controls import excluded_people
from apps.annotation.kinds import asks
from apps.annotation.models import Study
from apps.annotation.selectors.work_counts import agreement_rows
from apps.annotation.services import work_types


def annotator_agreement(study: Study | int) -> dict[int, str]:
    """{user id: "0.83 (n=40)"} for every annotator with a unit shared with someone."""
    return {
        person: f"{share:.2f} (n={n})" for person, (share, n) in agreement_shares(study).items()
    }


def agreement_shares(study: Study | int) -> dict[int, tuple[float, int]]:
    """{user id: (share of their answers matching the others' plurality, units compared)}."""
    from apps.analysis.stats.agreement import leave_one_out_agreement  # numpy: only here

    if not isinstance(study, Study):
        study = Study.objects.get(pk=study)
    works = [work for work in work_types(Role.ANNOTATOR) if asks(work, study)]
    excluded = excluded_people(study)  # below the control items' threshold, if it excludes
    rows: list[tuple[object, object, object]] = [
        row for work in works for row in agreement_rows(work, study) if row[1] not in excluded
    ]
    return {
        int(str(rater)): (share, n) for rater, (share, n) in leave_one_out_agreement(rows).items()
    }
