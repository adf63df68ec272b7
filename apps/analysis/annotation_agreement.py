"""Each annotator's agreement with the others, for the study progress page (issue 5 hook).

Over vettings (unit: perturbation) and comparisons (unit: perturbation x criterion), the share
of an annotator's judgements that match the plurality of the other annotators on that unit.
"""

from __future__ import annotations

from apps.analysis.stats.agreement import leave_one_out_agreement
from apps.annotation.models import Comparison, Vetting


def annotator_agreement(study_id: int) -> dict[int, str]:
    """{user id: "0.83 (n=40)"} for every annotator with a unit shared with someone."""
    rows: list[tuple[object, object, object]] = [
        (("v", p), a, v)
        for p, a, v in Vetting.objects.filter(study_id=study_id).values_list(
            "perturbation_id", "annotator_id", "verdict"
        )
    ]
    rows += [
        (("c", p, c), a, o)
        for p, c, a, o in Comparison.objects.filter(study_id=study_id).values_list(
            "perturbation_id", "criterion_id", "annotator_id", "outcome"
        )
    ]
    return {
        int(str(rater)): f"{share:.2f} (n={n})"
        for rater, (share, n) in leave_one_out_agreement(rows).items()
    }
