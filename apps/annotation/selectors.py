"""Study reads for pages: one study with the counts its page shows, in a few bulk queries."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from django.db.models import Count
from django.shortcuts import get_object_or_404

from apps.annotation.models import Study
from apps.corpus.models import Perturbation, SourceItem


@dataclass
class StudyOverview:
    study: Study
    item_count: int
    perturbation_count: int
    perturbations_by_kind: Sequence[Mapping[str, object]]


def study_for_user(user, pk: int) -> Study:
    """The study, or 404 if this user may not open it (guessing an id reveals nothing)."""
    return get_object_or_404(Study.objects.for_user(user).select_related("owner"), pk=pk)


def study_overview(study: Study) -> StudyOverview:
    items = SourceItem.objects.filter(dataset__studies=study)
    perturbations = Perturbation.objects.filter(item__dataset__studies=study, kind__studies=study)
    by_kind = list(
        perturbations.values("kind__slug", "kind__name")
        .annotate(n=Count("id"))
        .order_by("kind__slug")
    )
    return StudyOverview(
        study=study,
        item_count=items.count(),
        perturbation_count=sum(row["n"] for row in by_kind),
        perturbations_by_kind=by_kind,
    )
