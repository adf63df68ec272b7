"""CSV and JSONL imports, re-imports, and the round trip through export."""

import json

import pytest

from apps.corpus.exporting import export_csv, export_jsonl
from apps.corpus.importing import items_import
from apps.corpus.models import Dataset, Perturbation, SourceItem

pytestmark = pytest.mark.django_db


def test_csv_rows_sharing_an_id_are_one_item_with_several_perturbations(catalog, tmp_path):
    path = tmp_path / "items.csv"
    path.write_text(
        "id,source,original,task,metadata,kind,perturbed,explanation\n"
        'n1,Article.,"Line one,\nline two.",summarization,"{""year"": 2024}",negation,Not so.,flip\n'
        'n1,Article.,"Line one,\nline two.",summarization,"{""year"": 2024}",hypernym,Vague.,\n'
        "n2,,Only an item.,,,,,\n"
    )
    summary = items_import(path=path, dataset_name="csv")
    assert (summary.items_created, summary.perturbations_created) == (2, 2)
    item = SourceItem.objects.get(external_id="n1")
    assert item.original == "Line one,\nline two." and item.metadata == {"year": 2024}
    assert item.task.slug == "summarization"
    assert sorted(item.perturbations.values_list("kind__slug", flat=True)) == [
        "hypernym",
        "negation",
    ]
    again = items_import(path=path, dataset_name="csv")
    assert (again.items_created, again.perturbations_created) == (0, 0)


def test_task_option_applies_to_items_without_one(catalog, tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(
        '{"id": "a", "original": "x"}\n{"id": "b", "original": "y", "task": "translation"}\n'
    )
    items_import(path=path, dataset_name="t", task="summarization")
    tasks = dict(SourceItem.objects.values_list("external_id", "task__slug"))
    assert tasks == {"a": "summarization", "b": "translation"}


@pytest.mark.parametrize(("writer", "suffix"), [(export_jsonl, "jsonl"), (export_csv, "csv")])
def test_export_then_import_gives_the_same_dataset(catalog, tmp_path, writer, suffix):
    source = tmp_path / "source.jsonl"
    source.write_text(
        "".join(
            json.dumps(row, ensure_ascii=False) + "\n"
            for row in [
                {
                    "id": "a",
                    "original": 'Tea, "quoted"\nand a newline — ünïcode.',
                    "source": "S",
                    "task": "summarization",
                    "metadata": {"k": [1, 2]},
                    "perturbations": [
                        {
                            "id": "p1",
                            "kind": "negation",
                            "text": "No tea.",
                            "explanation": "negated",
                        },
                        {"kind": "hypernym", "text": "A drink."},
                    ],
                },
                {"id": "b", "original": "Lonely item."},
            ]
        )
    )
    items_import(path=source, dataset_name="first")
    exported = tmp_path / f"export.{suffix}"
    exported.write_text("".join(writer(Dataset.objects.get(name="first"))), encoding="utf-8")
    items_import(path=exported, dataset_name="second")

    def content(name):
        items = SourceItem.objects.filter(dataset__name=name).order_by("external_id")
        perturbations = Perturbation.objects.filter(item__dataset__name=name).order_by(
            "external_id"
        )
        return (
            [(i.external_id, i.original, i.source, i.task_id, i.metadata) for i in items],
            [
                (p.item.external_id, p.kind_id, p.external_id, p.text, p.explanation)
                for p in perturbations
            ],
        )

    assert content("first") == content("second")
    assert len(content("second")[1]) == 2
    # exporting again and re-importing into the same dataset adds nothing
    again = items_import(path=exported, dataset_name="second")
    assert (again.items_created, again.perturbations_created) == (0, 0)
