"""The FBI release imports whole and exact; a second import adds nothing; the summary names
the rows that repeat a row of another kind and the perturbations equal to their original."""

import csv
import io
import sys
from collections import Counter

import pytest
from django.core.management import call_command

from apps.corpus.importing import items_import
from apps.corpus.models import Dataset, Perturbation, PerturbationVersion, SourceItem

pytestmark = pytest.mark.django_db
csv.field_size_limit(sys.maxsize)


def _tsv_rows(folder):
    for path in sorted(folder.glob("*/*.tsv")):
        with path.open(newline="", encoding="utf-8") as handle:
            for row in csv.DictReader(handle, delimiter="\t"):
                yield path, row


def test_fbi_folder_imports_every_perturbation_byte_for_byte(catalog, fbi_folder):
    summary = items_import(path=fbi_folder, dataset_name="FBI", file_format="fbi", repeats="keep")
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
    assert (again.items_existing, again.perturbations_existing) == (2400, 2400)
    assert Perturbation.objects.count() == 2400


def test_fbi_summary_names_the_92_copies_of_score_invariant_rows_and_drops_them(
    catalog, fbi_folder
):
    summary = items_import(path=fbi_folder, dataset_name="FBI", file_format="fbi")
    assert summary.perturbations_created == 2400  # the paper's count: 2,492 - 92
    dropped = [r for r in summary.repeated if r.endswith("byte for byte: dropped")]
    assert len(dropped) == 92
    assert Counter(r.split(" row ")[0] for r in dropped) == {
        "long-form/superficial-errors.tsv": 61,
        "long-form/formatting-errors.tsv": 31,
    }
    assert all(" repeats score-invariant/score_invariant.tsv row " in r for r in dropped)
    kinds = Counter(Perturbation.objects.values_list("kind__slug", flat=True))
    assert len(kinds) == 23  # every row of both kinds is a copy
    assert not {"fbi-superficial-errors", "fbi-formatting-errors"} & set(kinds)
    # the same texts under another id are named, and kept
    kept = [r for r in summary.repeated if r.endswith(": kept")]
    assert len(kept) == 14 and all("under another id" in r for r in kept)
    assert (
        "factual/opposite-fact.tsv row 6 (factual-15_opposite-fact) repeats "
        "score-invariant/score_invariant.tsv row 229 (factual-15_remove-fact)" in "\n".join(kept)
    )
    assert Dataset.objects.get(name="FBI").publisher_validated


def test_fbi_summary_names_the_8_unchanged_rows_and_flags_them(catalog, fbi_folder):
    summary = items_import(path=fbi_folder, dataset_name="FBI", file_format="fbi")
    assert len(summary.unchanged) == 8
    assert "factual/entity-errors.tsv row 50 (factual-73_entity-errors)" in summary.unchanged
    assert "score-invariant/score_invariant.tsv row 219 (lf-6_formatting-errors)" in (
        summary.unchanged
    )
    flagged = Perturbation.objects.filter(flags__contains=["unchanged"])
    assert flagged.count() == 8
    assert all(p.unchanged for p in flagged.select_related("item"))


def test_keeping_the_repeats_is_the_researchers_choice(catalog, fbi_folder, researcher):
    out = io.StringIO()
    call_command(
        "import_items",
        str(fbi_folder),
        dataset="FBI",
        repeats="keep",
        owner=researcher.username,
        stdout=out,
    )
    text = out.getvalue()
    assert "2492 perturbations imported" in text
    assert "rows repeat a row of another kind (0 dropped)" in text
    assert "8 perturbations equal their original" in text
    assert "reasoning/wrong-formula.tsv row 82 (reasoning-21_wrong-formula)" in text
