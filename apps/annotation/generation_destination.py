"""A study's vetting queue as a destination of perturbation generation (corpus knows
destinations only through apps.corpus.generation.destinations; this is annotation's)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db.models import QuerySet
from django.urls import reverse

from apps.annotation.models import Study
from apps.annotation.services.plan import study_plan_request
from apps.catalog.models import PerturbationKind
from apps.corpus.generation.destinations import Destination


def owned_studies(user: Any) -> QuerySet[Study]:
    """The studies a researcher may send generated perturbations to: their own."""
    if not user.is_authenticated:
        return Study.objects.none()
    return Study.objects.filter(owner_id=user.pk)


def into_vetting_queue(*, job: Any, target: Study, kinds: Sequence[PerturbationKind]) -> None:
    """The study takes the job's dataset and kinds, and its plan gains the new perturbations."""
    target.datasets.add(job.dataset_id)
    target.kinds.add(*kinds)
    study_plan_request(study=target)


def study_limit(study: Study) -> int | None:
    """A generation into the study asks to be confirmed above the study's limit of requests."""
    return study.confirm_above_requests


def study_defaults(study: Study) -> dict[str, Any]:
    """Generate opened from a study: its first dataset and its kinds, preselected."""
    dataset = study.datasets.order_by("pk").values_list("pk", flat=True).first()
    kinds = list(study.kinds.values_list("pk", flat=True))
    return {"dataset": dataset, "kinds": kinds} if dataset else {"kinds": kinds}


def study_page(study: Study) -> tuple[str, str]:
    """Where generated perturbations wait for their vetting: the study's progress."""
    return f"Vet them in {study.name}", reverse("study-progress", args=[study.pk])


STUDY = Destination(
    name="study",
    help_text="Put the results in this study's vetting queue.",
    choices=owned_studies,
    deliver=into_vetting_queue,
    confirm_above=study_limit,
    form_defaults=study_defaults,
    page=study_page,
)
