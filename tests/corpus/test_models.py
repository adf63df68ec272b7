"""Perturbation versions and the stored diff."""

import pytest

from apps.corpus.diff import DIFF_VERSION
from apps.corpus.models import Perturbation
from tests.factories import PerturbationFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_revise_keeps_every_version_and_the_generation():
    perturbation = PerturbationFactory(text="Version one.", generation={"model": "m"})
    perturbation.revise(text="Version two.", note="first fix")
    editor = UserFactory()
    perturbation.revise(text="Version three.", author=editor, explanation="negated again")
    stored = Perturbation.objects.get(pk=perturbation.pk)
    assert stored.text == "Version three." and stored.explanation == "negated again"
    assert stored.generation == {"model": "m"}
    # the factory stores no version 1, so the two edits are versions 1 and 2
    assert list(stored.versions.values_list("number", "text", "author", "note")) == [
        (1, "Version two.", None, "first fix"),
        (2, "Version three.", editor.pk, ""),
    ]


def test_diff_is_computed_once_and_recomputed_after_an_edit(django_assert_num_queries):
    perturbation = PerturbationFactory(
        item__original="The council voted to close the library.",
        text="The council voted not to close the library.",
    )
    fresh = Perturbation.objects.select_related("item").get(pk=perturbation.pk)
    with django_assert_num_queries(1):  # computed and stored
        ops = fresh.diff_ops()
    assert [op["op"] for op in ops] == ["equal", "insert", "equal"]
    assert ops[1]["b"].strip() == "not"
    again = Perturbation.objects.select_related("item").get(pk=perturbation.pk)
    assert again.diff["version"] == DIFF_VERSION
    with django_assert_num_queries(0):  # served from the stored copy
        again.diff_ops()
    again.revise(text="The council voted to open the library.")
    assert [op["op"] for op in again.diff_ops()] == ["equal", "replace", "equal"]
