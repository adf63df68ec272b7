"""The FBI release imports whole and exact; a second import adds nothing (issue bar)."""

import csv
import sys
from collections import Counter

import pytest

from apps.corpus.importing import items_import
from apps.corpus.models import Perturbation, PerturbationVersion, SourceItem

pytestmark = pytest.mark.django_db
csv.field_size_limit(sys.maxsize)


def _tsv_rows(folder):
    for path in sorted(folder.glob("*/*.tsv")):
        with path.open(newline="", encoding="utf-8") as handle:
            for row in csv.DictReader(handle, delimiter="\t"):
                yield path, row


def test_fbi_folder_imports_every_perturbation_byte_for_byte(catalog, fbi_folder):
    summary = items_import(path=fbi_folder, dataset_name="FBI", file_format="fbi")
    assert (summary.items_created, summary.perturbations_created) == (2492, 2492)
    kinds = Counter(Perturbation.objects.values_list("kind__slug", flat=True))
    assert len(kinds) == 25 and kinds["fbi-score-invariant"] == 516
    assert sum(n for k, n in kinds.items() if k != "fbi-score-invariant") == 1976
    abilities = Counter(SourceItem.objects.values_list("metadata__ability", flat=True))
    assert set(abilities) == {"long-form", "factual", "instruction-following", "reasoning"}
    stored = {
        (p.item.external_id, p.kind.slug): (p.text, p.item.original, p.item.source)
        for p in Perturbation.objects.select_related("item", "kind")
    }
    for path, row in _tsv_rows(fbi_folder):
        key = (f"{path.stem}:{row['cdx']}", "fbi-" + path.stem.replace("_", "-"))
        assert stored[key] == (row["perturbed_gpt4"], row["og"], row["question"])
    assert PerturbationVersion.objects.filter(number=1).count() == 2492


def test_second_fbi_import_adds_nothing(catalog, fbi_folder):
    items_import(path=fbi_folder, dataset_name="FBI", file_format="fbi")
    again = items_import(path=fbi_folder, dataset_name="FBI", file_format="fbi")
    assert (again.items_created, again.perturbations_created) == (0, 0)
    assert (again.items_existing, again.perturbations_existing) == (2492, 2492)
    assert Perturbation.objects.count() == 2492
