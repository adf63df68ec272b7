"""The demo study: three users (one per role), our own summarization items, one study with
its plan built, so the annotator can vet, compare and rate texts (direct assessment, under
coherence and fluency as SummEval did) and the expert can vote at once."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.db import transaction

from apps.accounts.models import Role, User
from apps.annotation.models import Study, StudyMembership
from apps.annotation.services import study_plan_build
from apps.catalog.models import Aspect, Criterion, DescriptionType, PerturbationKind
from apps.corpus.importing import items_import
from apps.corpus.models import Dataset, Perturbation

DEMO_ITEMS = Path(settings.BASE_DIR) / "fixtures" / "demo" / "items.jsonl"
DEMO_PASSWORD = "discern-demo"
DEMO_USERS = {"researcher": Role.RESEARCHER, "annotator": Role.ANNOTATOR, "expert": Role.EXPERT}
#: The criteria the demo's texts are rated under (direct assessment).
DEMO_RATED = ("discern-coherence-default", "discern-fluency-default")


@transaction.atomic
def demo_load() -> Study:
    """Create (or refresh) the demo users, dataset and study. Safe to run again."""
    users = {name: _user(name, role) for name, role in DEMO_USERS.items()}
    items_import(
        path=DEMO_ITEMS,
        dataset_name="Demo news summaries",
        file_format="jsonl",
        task="summarization",
        owner=users["researcher"],
    )
    dataset = Dataset.objects.get(name="Demo news summaries", owner=users["researcher"])
    study, _ = Study.objects.update_or_create(
        slug="demo",
        defaults={
            "name": "Demo: do judges notice summary errors?",
            "owner": users["researcher"],
            "description": "Six news summaries written for this demo, each with a few "
            "perturbations of the aspect-targeted kinds.",
            "guidelines": "Read the source first. Judge only the change that the kind describes.",
        },
    )
    study.datasets.add(dataset)
    kind_ids = Perturbation.objects.filter(item__dataset=dataset).values("kind_id")
    study.kinds.set(PerturbationKind.objects.filter(id__in=kind_ids))
    study.criteria.set(_demo_criteria())
    study.assessment_criteria.set(Criterion.objects.filter(key__in=DEMO_RATED))
    for name, role in DEMO_USERS.items():
        if role != Role.RESEARCHER:
            StudyMembership.objects.update_or_create(
                study=study, user=users[name], defaults={"role": role}
            )
    study_plan_build(study=study)
    return study


def _demo_criteria() -> list[Criterion]:
    """One description per aspect, the description types taken in turn: with one demo
    annotator, the criteria design (one description per aspect each) can then be met."""
    types = [t for t in DescriptionType.values if t != DescriptionType.LITERATURE]
    chosen = []
    for i, aspect in enumerate(Aspect.objects.order_by("position", "slug")):
        wanted = f"discern-{aspect.slug}-{types[i % len(types)]}"
        criterion = Criterion.objects.filter(key=wanted).first()
        if criterion is not None:
            chosen.append(criterion)
    return chosen


def _user(name: str, role: str) -> User:
    user, created = User.objects.get_or_create(username=name, defaults={"role": role})
    if created:
        user.set_password(DEMO_PASSWORD)  # no staff flag: a researcher works from the pages
        user.save()
    return user
