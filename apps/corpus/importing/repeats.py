"""What an import holds that a researcher must know: rows repeating a row of another kind
(FBI-style folders, one perturbation a row) and perturbations equal to their original.

In the FBI release, rows of two degrading kinds repeat rows of `score_invariant` byte for
byte: the same text would be expected both to lower the score and to keep it. By default
those copies are dropped from the degrading kind (the score-invariant row stays); other
repeats (the same texts under another id) are named and kept. See docs/formats.md.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from apps.corpus.importing.records import ItemRecord

#: How an import treats rows repeating a row of another kind.
DROP, KEEP = "drop", "keep"
REPEAT_POLICIES = (DROP, KEEP)


@dataclass(frozen=True)
class Row:
    file: str
    row: int | None
    external_id: str
    kind: str

    def __str__(self) -> str:
        return f"{self.file} row {self.row} ({self.external_id})"


@dataclass(frozen=True)
class Repeat:
    row: Row
    of: Row
    identical: bool  # every column, the id included
    dropped: bool

    def __str__(self) -> str:
        how = "byte for byte" if self.identical else "(the same texts under another id)"
        action = "dropped" if self.dropped else "kept"
        return f"{self.row} repeats {self.of} {how}: {action}"


def _row(record: ItemRecord) -> Row:
    perturbation = record.perturbations[0]
    return Row(record.file, record.row, perturbation.external_id, perturbation.kind)


def _texts(record: ItemRecord) -> tuple[str, str, str]:
    return (record.source, record.original, record.perturbations[0].text)


def find_repeats(
    records: list[ItemRecord], *, invariant_kinds: Iterable[str], policy: str = DROP
) -> tuple[list[ItemRecord], list[Repeat]]:
    """Records of one perturbation each whose source, original and perturbed text equal a
    record of another kind. A degrading row repeats the score-invariant row of its group
    (else the group's first row); with `policy` DROP, degrading rows repeating a
    score-invariant row byte for byte are left out. -> (records to import, repeats)."""
    invariant = set(invariant_kinds)
    groups: dict[tuple[str, str, str], list[ItemRecord]] = defaultdict(list)
    for record in records:
        if len(record.perturbations) == 1:
            groups[_texts(record)].append(record)
    repeats: list[Repeat] = []
    for group in groups.values():
        if len({r.perturbations[0].kind for r in group}) > 1:
            repeats.extend(_group_repeats(group, invariant, policy))
    dropped = {(r.row.file, r.row.row) for r in repeats if r.dropped}
    kept = [r for r in records if (r.file, r.row) not in dropped]
    return kept, sorted(repeats, key=lambda r: (r.row.file, r.row.row or 0))


def _group_repeats(group: list[ItemRecord], invariant: set[str], policy: str):
    anchor = next((r for r in group if r.perturbations[0].kind in invariant), group[0])
    anchor_row = _row(anchor)
    for record in group:
        row = _row(record)
        if record is anchor or row.kind == anchor_row.kind:
            continue
        identical = row.external_id == anchor_row.external_id
        conflicting = anchor_row.kind in invariant and row.kind not in invariant
        yield Repeat(row, anchor_row, identical, policy == DROP and identical and conflicting)


def unchanged_rows(records: list[ItemRecord]) -> list[str]:
    """Every perturbation of the file whose text equals its item's original."""
    return [
        f"{r.file} row {p.row if p.row is not None else r.row}"
        + (f" ({p.external_id})" if p.external_id else "")
        for r in records
        for p in r.perturbations
        if p.text == r.original
    ]
