"""Studies ready to annotate: items, perturbations, members, criteria and a built plan."""

from __future__ import annotations

from dataclasses import dataclass, field

from apps.annotation.models import Study
from apps.annotation.services import study_plan_build
from apps.catalog.models import Metric
from tests.factories import (
    AspectFactory,
    CriterionFactory,
    DatasetFactory,
    KindFactory,
    MembershipFactory,
    PerturbationFactory,
    SourceItemFactory,
    StudyFactory,
    TaskFactory,
    UserFactory,
)

TYPES = ("default", "simplified", "detailed", "term", "list")


@dataclass
class Setup:
    study: Study
    annotators: list = field(default_factory=list)
    experts: list = field(default_factory=list)
    perturbations: list = field(default_factory=list)
    criteria: list = field(default_factory=list)
    kinds: list = field(default_factory=list)


def study_setup(
    *,
    perturbations: int = 3,
    kinds: int = 1,
    annotators: int = 1,
    experts: int = 0,
    aspects: int = 0,
    types_per_aspect: int = 1,
    build: bool = True,
    prefix: str = "s",
    assess: bool = False,
    **settings,
) -> Setup:
    """A study on one summarization dataset; `perturbations` per kind, one item each. With
    `assess`, its texts are rated (direct assessment) under its criteria too."""
    task = TaskFactory(slug="summarization", text_name="summary")
    for position, slug in enumerate(("coherence", "consistency", "fluency")):
        Metric.objects.get_or_create(
            task=task,
            slug=slug,
            defaults={
                "name": slug.title(),
                "definition": f"{slug} means ...",
                "position": position,
            },
        )
    dataset = DatasetFactory(task=task)
    study = StudyFactory(guidelines="Judge only the change the kind describes.", **settings)
    study.datasets.add(dataset)
    setup = Setup(study=study)
    for k in range(kinds):
        kind = KindFactory(
            slug=f"{prefix}-kind-{k}",
            name=f"Kind {k}",
            description="Negates one statement.",
            quality_issue=f"Quality issue {k}.",
        )
        study.kinds.add(kind)
        setup.kinds.append(kind)
        for _ in range(perturbations):
            item = SourceItemFactory(dataset=dataset, source="The council met on Tuesday.")
            setup.perturbations.append(
                PerturbationFactory(item=item, kind=kind, explanation="Added 'not'.")
            )
    for a in range(aspects):
        aspect = AspectFactory(slug=f"{prefix}-aspect-{a}", position=a)
        for t in range(types_per_aspect):
            criterion = CriterionFactory(
                key=f"{prefix}-{a}-{TYPES[t]}",
                aspect=aspect,
                description_type=TYPES[t],
                text=f"How good the {{T}} is ({a}, {TYPES[t]}).",
            )
            study.criteria.add(criterion)
            setup.criteria.append(criterion)
    for n in range(annotators):
        user = UserFactory(username=f"{prefix}-annotator-{n}", role="annotator")
        MembershipFactory(study=study, user=user, role="annotator")
        setup.annotators.append(user)
    for n in range(experts):
        user = UserFactory(username=f"{prefix}-expert-{n}", role="expert")
        MembershipFactory(study=study, user=user, role="expert")
        setup.experts.append(user)
    if assess:
        study.assessment_criteria.set(setup.criteria)
    if build:
        study_plan_build(study=study)
    return setup
