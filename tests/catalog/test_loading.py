"""The shipped catalog loads into the database with the tree and expected impact of methods §1."""

import pytest

from apps.catalog.loading import catalog_load
from apps.catalog.models import Aspect, Criterion, Metric, PerturbationKind, Task

pytestmark = pytest.mark.django_db


def test_catalog_loads_the_tree_criteria_tasks_and_kinds():
    counts = catalog_load()
    assert counts["aspects"] == 11 and Aspect.objects.count() == 11
    assert Criterion.objects.filter(source="discern").count() == 55  # 11 aspects x 5 types
    assert Task.objects.count() == 12
    assert list(
        Metric.objects.filter(task__slug="summarization").values_list("slug", flat=True)
    ) == ["coherence", "consistency", "fluency", "relevance"]
    assert PerturbationKind.objects.filter(family="aspect-targeted").count() == 18
    assert PerturbationKind.objects.filter(family="fbi").count() == 25


def test_loading_twice_changes_nothing():
    catalog_load()
    before = (Aspect.objects.count(), Criterion.objects.count(), PerturbationKind.objects.count())
    catalog_load()
    assert (
        Aspect.objects.count(),
        Criterion.objects.count(),
        PerturbationKind.objects.count(),
    ) == before


@pytest.mark.parametrize(
    ("kind", "impact"),
    [
        ("spelling-mistake", ["grammaticality", "fluency", "readability", "overall"]),
        ("complement", ["non-hallucination", "faithfulness", "adequacy", "overall"]),
        ("sentence-exchange", ["coherence", "readability", "overall"]),
        ("fbi-score-invariant", []),
    ],
)
def test_expected_impact_is_the_target_and_its_ancestors(kind, impact):
    catalog_load()
    found = PerturbationKind.objects.get(slug=kind)
    assert [a.slug for a in found.expected_impact()] == impact


def test_criterion_renders_the_text_name():
    catalog_load()
    term = Criterion.objects.get(key="discern-fluency-term")
    assert "{T}" in term.text
    assert "{T}" not in term.render("summary") and "summary" in term.render("summary")
