"""The vetting page highlights exactly what changed, on real FBI texts (one row per kind).

Outside the highlighted spans the two panes show the same text, and with the highlights the
left pane is the original and the right pane the perturbed text, character for character
(whitespace and markdown included). The diff's minimality is tested in tests/corpus/test_diff.
"""

import csv
import html
import re
import sys
import uuid

import pytest

from apps.annotation.services import study_plan_build
from tests.annotation.factories import study_setup
from tests.annotation.work_calls import vetting_next, vetting_submit
from tests.factories import PerturbationFactory, SourceItemFactory

pytestmark = pytest.mark.django_db

MARKER = '<span class="diff-ws">\u21b5</span>'


def first_rows(folder):
    csv.field_size_limit(sys.maxsize)
    for path in sorted(folder.glob("*/*.tsv")):
        with path.open(newline="", encoding="utf-8") as handle:
            row = next(csv.DictReader(handle, delimiter="\t"))
            yield f"{path.parent.name}/{path.stem}", row


def pane(page: str, pane_id: str) -> str:
    found = re.search(rf'id="{pane_id}">(.*?)</div>', page, re.DOTALL)
    assert found, pane_id
    return found.group(1)


def text_of(fragment: str, drop: str | None = None) -> str:
    """The text shown, optionally without the content of <drop> elements."""
    if drop:
        fragment = re.sub(rf'<{drop} class="diff-[a-z]+">.*?</{drop}>', "", fragment, flags=re.S)
    fragment = fragment.replace(MARKER, "")
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def test_highlights_cover_exactly_what_changed(client, fbi_folder):
    setup = study_setup(perturbations=0, annotators=1)
    kind = setup.kinds[0]
    dataset = setup.study.datasets.get()
    rows = dict(first_rows(fbi_folder))
    assert len(rows) >= 20
    for cdx, row in rows.items():
        item = SourceItemFactory(
            dataset=dataset, external_id=cdx, source=row["question"], original=row["og"]
        )
        PerturbationFactory(item=item, kind=kind, text=row["perturbed_gpt4"])
    study_plan_build(study=setup.study)
    ann = setup.annotators[0]
    client.force_login(ann)
    checked = 0
    while (slot := vetting_next(study=setup.study, annotator=ann)) is not None:
        page = client.get(f"/studies/{setup.study.pk}/vet/{slot.perturbation_id}/").text
        perturbation = slot.perturbation
        original, perturbed = perturbation.item.original, perturbation.text
        left, right, inline = (
            pane(page, "original"),
            pane(page, "perturbed"),
            pane(page, "inline-diff"),
        )
        assert text_of(left) == original
        assert text_of(right) == perturbed
        assert text_of(left, drop="del") == text_of(right, drop="ins")  # the unchanged text
        assert text_of(inline, drop="ins") == original
        assert text_of(inline, drop="del") == perturbed
        if original != perturbed:
            assert "diff-del" in left + right or "diff-ins" in left + right
        vetting_submit(
            study=setup.study,
            annotator=ann,
            perturbation_id=slot.perturbation_id,
            verdict="valid",
            idempotency_key=uuid.uuid4(),
        )
        checked += 1
    assert checked == len(rows)
