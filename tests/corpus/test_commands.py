"""Importing on the command line gives the dataset an owner, who then sees it; item counts
are counted once however many studies and members a dataset has."""

from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from apps.corpus.diff import diff_payload
from apps.corpus.models import Dataset, Perturbation
from tests.factories import DatasetFactory, MembershipFactory, StudyFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def items_file(tmp_path) -> Path:
    path = tmp_path / "items.csv"
    path.write_text("id,original\na1,One text.\na2,Another text.\n", encoding="utf-8")
    return path


def test_owner_named_on_the_command_line_sees_the_dataset(catalog, client, items_file):
    rita = UserFactory(username="rita", role="researcher")
    UserFactory(username="sam", role="researcher")
    call_command("import_items", str(items_file), "--dataset", "News", "--owner", "rita")
    assert Dataset.objects.get(name="News").owner == rita
    client.force_login(rita)
    assert b"News" in client.get("/datasets/").content


def test_without_an_owner_the_command_says_what_to_pass(catalog, items_file):
    UserFactory(username="rita", role="researcher")
    UserFactory(username="sam", role="researcher")
    with pytest.raises(CommandError, match=r"needs an owner .* pass --owner USERNAME"):
        call_command("import_items", str(items_file), "--dataset", "News")
    with pytest.raises(CommandError, match="no user named 'nobody'"):
        call_command("import_items", str(items_file), "--dataset", "News", "--owner", "nobody")
    UserFactory(username="ann", role="annotator")
    with pytest.raises(CommandError, match="'ann' is not a researcher"):
        call_command("import_items", str(items_file), "--dataset", "News", "--owner", "ann")
    assert not Dataset.objects.filter(name="News").exists()


def test_the_owner_is_inferred_when_there_is_only_one_or_the_dataset_has_one(catalog, items_file):
    rita = UserFactory(username="rita", role="researcher")
    call_command("import_items", str(items_file), "--dataset", "News")
    assert Dataset.objects.get(name="News").owner == rita
    UserFactory(username="sam", role="researcher")
    more = items_file.with_name("more.csv")
    more.write_text("id,original\na3,A third.\n", encoding="utf-8")
    call_command("import_items", str(more), "--dataset", "News")  # keeps its owner
    assert Dataset.objects.get(name="News").items.count() == 3


def test_item_counts_are_not_multiplied_by_studies_and_members(catalog, client, api_client):
    owner = UserFactory(username="rita", role="researcher")
    dataset = DatasetFactory(name="Counted", owner=owner)
    for n in range(3):
        dataset.items.create(external_id=f"i{n}", original=f"text {n}")
    for _ in range(2):
        study = StudyFactory(owner=owner)
        study.datasets.add(dataset)
        for _ in range(2):
            MembershipFactory(study=study, user=UserFactory())
    client.force_login(owner)
    page = client.get("/datasets/").content.decode()
    assert "<td>3</td>" in page and "<td>6</td>" not in page and "<td>12</td>" not in page
    api_client.force_authenticate(owner)
    listed = api_client.get("/api/v1/datasets/").json()["results"]
    assert [d["item_count"] for d in listed if d["name"] == "Counted"] == [3]


def test_the_command_stores_the_imported_texts_diffs(catalog, tmp_path, capsys):
    UserFactory(username="rita", role="researcher")
    path = tmp_path / "pairs.csv"
    path.write_text(
        "id,original,kind,perturbed\n"
        "a1,The council closed the library.,negation,The council did not close the library.\n"
        "a2,The river rose.,negation,The river did not rise.\n",
        encoding="utf-8",
    )
    call_command("import_items", str(path), "--dataset", "News", "--owner", "rita")
    assert "Diffs of 2 texts stored" in capsys.readouterr().out
    for perturbation in Perturbation.objects.select_related("item"):
        assert perturbation.diff == diff_payload(perturbation.item.original, perturbation.text)
