"""`items_import`: read, validate everything, then write all or nothing."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from django.db import transaction

from apps.catalog.models import PerturbationKind, Task
from apps.corpus.importing import readers
from apps.corpus.importing.records import ItemRecord
from apps.corpus.importing.repeats import DROP, REPEAT_POLICIES, find_repeats, unchanged_rows
from apps.corpus.importing.validation import perturbation_key, validate_records
from apps.corpus.models import Dataset, Origin, Perturbation, PerturbationVersion, SourceItem
from apps.inputs.fields import text_problem
from apps.inputs.problems import ImportFailed, ImportProblem

Progress = Callable[[int, int], None]
FORMATS = ("csv", "tsv", "jsonl", "fbi")
BATCH = 1000


@dataclass
class ImportSummary:
    dataset: str
    items_created: int = 0
    items_existing: int = 0
    perturbations_created: int = 0
    perturbations_existing: int = 0
    seconds: float = 0.0
    #: Rows repeating a row of another kind (FBI folders), each saying whether it was dropped.
    repeated: list[str] = field(default_factory=list)
    #: Perturbations equal to their original, flagged "unchanged".
    unchanged: list[str] = field(default_factory=list)
    #: The dataset was marked "already validated by its publisher" (FBI folders).
    publisher_validated: bool = False

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def guess_format(path: Path) -> str:
    if path.is_dir():
        return "fbi"
    suffix = path.suffix.lower().lstrip(".")
    return {"json": "jsonl", "ndjson": "jsonl", "txt": "tsv"}.get(suffix, suffix)


def read_records(path: Path, file_format: str) -> readers.Read:
    if file_format == "csv":
        return readers.read_csv(path)
    if file_format == "tsv":
        return readers.read_csv(path, delimiter="\t")
    if file_format == "jsonl":
        return readers.read_jsonl(path)
    if file_format == "fbi":
        return readers.read_fbi(path)
    raise ImportFailed(
        [
            ImportProblem(
                path.name, f"unknown format '{file_format}' (use one of {', '.join(FORMATS)})"
            )
        ]
    )


def items_import(
    *,
    path: Path,
    dataset_name: str,
    file_format: str | None = None,
    task: str = "",
    owner=None,
    progress: Progress | None = None,
    repeats: str = DROP,
) -> ImportSummary:
    """Import source items (and ready-made perturbations) into ``owner``'s dataset of that name.

    The dataset is looked up by owner and name, so a name never reaches another researcher's
    dataset: it names (or creates) one of ``owner``'s own. Raises ImportFailed, having written
    nothing, if any record has a problem or the file holds no record. Records whose external id
    is already stored are skipped, so importing the same file twice adds nothing.
    An FBI folder's rows repeating a row of another kind are named, and dropped from the
    degrading kind when they copy a score-invariant row (``repeats``: drop or keep); the
    dataset is marked validated by its publisher.
    """
    started = time.perf_counter()
    file_format = file_format or guess_format(path)
    records, problems = read_records(path, file_format)
    summary = ImportSummary(dataset=dataset_name, publisher_validated=file_format == "fbi")
    if repeats not in REPEAT_POLICIES:
        problems.append(ImportProblem(path.name, f"repeats must be one of {REPEAT_POLICIES}"))
    elif file_format == "fbi":
        invariant = PerturbationKind.objects.filter(score_invariant=True)
        records, found = find_repeats(
            records, invariant_kinds=invariant.values_list("slug", flat=True), policy=repeats
        )
        summary.repeated = [str(r) for r in found]
    summary.unchanged = unchanged_rows(records)
    kinds = dict(PerturbationKind.objects.values_list("slug", "id"))
    tasks = dict(Task.objects.values_list("slug", "id"))
    problems += validate_records(records, kinds=set(kinds), tasks=set(tasks), default_task=task)
    problems += _dataset_name_problems(path.name, dataset_name)
    if not records and not problems:
        problems.append(ImportProblem(path.name, "no rows to import: the file holds no record"))
    if problems:
        raise ImportFailed(problems)
    with transaction.atomic():
        dataset, _ = Dataset.objects.get_or_create(
            owner=owner, name=dataset_name, defaults={"task_id": tasks.get(task)}
        )
        if summary.publisher_validated and not dataset.publisher_validated:
            Dataset.objects.filter(pk=dataset.pk).update(publisher_validated=True)
        tally = _Tally(progress, total=len(records) + sum(len(r.perturbations) for r in records))
        item_ids = _write_items(dataset, records, tasks, task, summary, tally)
        _write_perturbations(records, item_ids, kinds, summary, tally)
        tally.advance(0)
    summary.seconds = round(time.perf_counter() - started, 3)
    return summary


def _dataset_name_problems(file: str, name: str) -> list[ImportProblem]:
    limit = Dataset._meta.get_field("name").max_length or 200
    if not name.strip():
        message = "a dataset name is required"
    elif len(name) > limit:
        message = f"longer than {limit} characters"
    else:
        message = text_problem(name) or ""
    return [ImportProblem(file, message, field="dataset")] if message else []


class _Tally:
    """Counts records and perturbations written (or found already there) for progress."""

    def __init__(self, progress: Progress | None, total: int):
        self.progress, self.total, self.done = progress, total, 0

    def advance(self, n: int) -> None:
        self.done += n
        if self.progress:
            self.progress(self.done, self.total)


def _write_items(dataset, records, tasks, default_task, summary, tally) -> dict[str, int]:
    stored = {
        ext: (pk, original, source)
        for ext, pk, original, source in SourceItem.objects.filter(dataset=dataset).values_list(
            "external_id", "id", "original", "source"
        )
    }
    changed = [
        r
        for r in records
        if r.external_id in stored and stored[r.external_id][1:] != (r.original, r.source)
    ]
    if changed:
        raise ImportFailed(
            [
                ImportProblem(
                    r.file,
                    f"id '{r.external_id}' is already stored with a different "
                    "text; ids must stay stable",
                    row=r.row,
                    field="id",
                )
                for r in changed
            ]
        )
    new = [r for r in records if r.external_id not in stored]
    summary.items_existing = len(records) - len(new)
    tally.advance(summary.items_existing)
    for start in range(0, len(new), BATCH):
        batch = [_item(dataset, r, tasks, default_task) for r in new[start : start + BATCH]]
        SourceItem.objects.bulk_create(batch)
        summary.items_created += len(batch)
        tally.advance(len(batch))
    return dict(SourceItem.objects.filter(dataset=dataset).values_list("external_id", "id"))


def _item(dataset: Dataset, r: ItemRecord, tasks: dict[str, int], default_task: str) -> SourceItem:
    return SourceItem(
        dataset=dataset,
        external_id=r.external_id,
        original=r.original,
        source=r.source,
        metadata=r.metadata,
        task_id=tasks.get(r.task or default_task) or dataset.task_id,
    )


def _write_perturbations(records, item_ids, kinds, summary, tally) -> None:
    wanted = [(item_ids[r.external_id], p) for r in records for p in r.perturbations]
    originals = {item_ids[r.external_id]: r.original for r in records}
    stored = set(
        Perturbation.objects.filter(item_id__in={i for i, _ in wanted}).values_list(
            "item_id", "kind_id", "external_id"
        )
    )
    new = []
    for item_id, p in wanted:
        key = (item_id, kinds[p.kind], perturbation_key(p.external_id, p.text))
        if key in stored:
            summary.perturbations_existing += 1
            continue
        stored.add(key)
        new.append(
            Perturbation(
                item_id=item_id,
                kind_id=key[1],
                external_id=key[2],
                text=p.text,
                explanation=p.explanation,
                origin=Origin.IMPORT,
                flags=["unchanged"] if p.text == originals[item_id] else [],
            )
        )
    tally.advance(summary.perturbations_existing)
    for start in range(0, len(new), BATCH):
        created = Perturbation.objects.bulk_create(new[start : start + BATCH])
        PerturbationVersion.objects.bulk_create(
            PerturbationVersion(perturbation=p, number=1, text=p.text, explanation=p.explanation)
            for p in created
        )
        summary.perturbations_created += len(created)
        tally.advance(len(created))
