"""The demo study: three users (one per role), our own summarization items, one study with
its plan built, so the annotator can vet, compare and rate texts (direct assessment, under
coherence and fluency as SummEval did) and the expert can vote at once.

``load_demo`` (what ``make demo`` runs) loads it with ``audit_texts``: eight more items and the
four rule-based aspect-targeted kinds written over all fourteen, in a dataset marked validated by
its publisher (us), so that an audit of a judge on the study has enough texts to reach a verdict
(docs/audit.md). The tests' smaller demo leaves them out."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.db import transaction

from apps.accounts.models import Role, User
from apps.annotation.models import Study, StudyMembership
from apps.annotation.services import study_plan_build, work_types
from apps.catalog.models import Aspect, Criterion, DescriptionType, PerturbationKind
from apps.corpus.generation.jobs import generation_job_run_here, generation_job_start
from apps.corpus.importing import items_import
from apps.corpus.models import Dataset, Origin, Perturbation
from apps.corpus.services import dataset_mark_validated

DEMO_ITEMS = Path(settings.BASE_DIR) / "fixtures" / "demo" / "items.jsonl"
AUDIT_ITEMS = Path(settings.BASE_DIR) / "fixtures" / "demo" / "audit_items.jsonl"
#: Rule-based kinds written over every item when the demo comes with its audit texts: each
#: gives at least 8 texts, enough for an audit's verdicts.
AUDIT_KINDS = ("sentence-deletion", "sentence-exchange", "spelling-mistake", "word-exchange")
DEMO_PASSWORD = "discern-demo"
DEMO_SLUG = "demo"
DEMO_USERS = {"researcher": Role.RESEARCHER, "annotator": Role.ANNOTATOR, "expert": Role.EXPERT}


@transaction.atomic
def demo_load(*, audit_texts: bool = False) -> Study:
    """Create (or refresh) the demo users, dataset and study. Safe to run again.
    ``audit_texts``: with the texts an audit needs (the module's docstring)."""
    users = {name: _user(name, role) for name, role in DEMO_USERS.items()}
    for path in (DEMO_ITEMS, AUDIT_ITEMS) if audit_texts else (DEMO_ITEMS,):
        items_import(
            path=path,
            dataset_name="Demo news summaries",
            file_format="jsonl",
            task="summarization",
            owner=users["researcher"],
        )
    dataset = Dataset.objects.get(name="Demo news summaries", owner=users["researcher"])
    study, _ = Study.objects.update_or_create(
        slug=DEMO_SLUG,
        defaults={
            "name": "Demo: do judges notice summary errors?",
            "owner": users["researcher"],
            "description": _description(audit_texts),
            "guidelines": "Read the source first. Judge only the change that the kind describes.",
        },
    )
    study.datasets.add(dataset)
    if audit_texts:
        study.kinds.set(_audit_kinds(dataset, users["researcher"]))
    else:
        kind_ids = Perturbation.objects.filter(item__dataset=dataset).values("kind_id")
        study.kinds.set(PerturbationKind.objects.filter(id__in=kind_ids))
    study.criteria.set(_demo_criteria())
    for work in work_types():
        work.setup.demo(study)  # what a kind with its own settings asks of the demo
    for name, role in DEMO_USERS.items():
        if role != Role.RESEARCHER:
            StudyMembership.objects.update_or_create(
                study=study, user=users[name], defaults={"role": role}
            )
    study_plan_build(study=study)
    return study


def _description(audit_texts: bool) -> str:
    if audit_texts:
        return (
            "Fourteen news summaries written for this demo, perturbed by the four rule-based "
            "aspect-targeted kinds (the first six also by hand, with LLM-written kinds: see "
            "the dataset)."
        )
    return (
        "Six news summaries written for this demo, each with a few perturbations of the "
        "aspect-targeted kinds."
    )


def _audit_kinds(dataset: Dataset, researcher: User) -> list[PerturbationKind]:
    """The rule-based kinds written over every item (once), the dataset marked validated."""
    kinds = list(PerturbationKind.objects.filter(slug__in=AUDIT_KINDS))
    written = Perturbation.objects.filter(
        item__dataset=dataset, kind__in=kinds, origin=Origin.RULE
    ).exists()
    if not written:
        job = generation_job_start(dataset=dataset, kinds=kinds, user=researcher, start=False)
        generation_job_run_here(job)
    dataset_mark_validated(dataset=dataset, validated=True)
    return kinds


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
