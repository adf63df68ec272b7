from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.corpus.diffs import diffs_store_timed
from apps.corpus.importing import ImportFailed, items_import
from apps.corpus.importing.items import FORMATS
from apps.corpus.importing.owner import OwnerNeeded, import_owner_resolve
from apps.corpus.importing.repeats import DROP, REPEAT_POLICIES
from apps.corpus.models import Dataset


class Command(BaseCommand):
    help = "Import source items (with optional ready-made perturbations); all or nothing."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path)
        parser.add_argument("--dataset", required=True, help="Dataset name (created if new).")
        parser.add_argument("--format", choices=FORMATS, help="Default: from the file suffix.")
        parser.add_argument("--task", default="", help="Task slug for items that name none.")
        parser.add_argument(
            "--repeats",
            choices=REPEAT_POLICIES,
            default=DROP,
            help="FBI folders: drop (default) or keep rows of a degrading kind that copy a "
            "score-invariant row byte for byte.",
        )
        parser.add_argument(
            "--owner",
            metavar="USERNAME",
            help="The researcher who owns the dataset. Needed for a new dataset unless there is "
            "exactly one researcher; an existing dataset keeps its owner.",
        )

    def handle(
        self,
        *args,
        path: Path,
        dataset: str,
        format: str | None,
        task: str,
        repeats: str,
        owner: str | None,
        **options,
    ):
        try:
            user = import_owner_resolve(username=owner, dataset_name=dataset)
        except OwnerNeeded as exc:
            raise CommandError(f"Nothing was imported: {exc}.") from exc
        last = [-1]

        def progress(done: int, total: int) -> None:
            percent = 100 * done // max(total, 1)
            if percent >= last[0] + 10 or (done == total and percent != last[0]):
                last[0] = percent
                self.stderr.write(f"  {percent:3d}% ({done:,}/{total:,})")

        try:
            summary = items_import(
                path=path,
                dataset_name=dataset,
                file_format=format,
                task=task,
                repeats=repeats,
                owner=user,
                progress=progress,
            )
        except ImportFailed as exc:
            raise CommandError(f"Nothing was imported.\n{exc}") from exc
        self.stdout.write(
            self.style.SUCCESS(
                f"{summary.dataset}: {summary.items_created} items and "
                f"{summary.perturbations_created} perturbations imported; "
                f"{summary.items_existing} items and {summary.perturbations_existing} "
                f"perturbations were already there ({summary.seconds:.2f} s). "
                f"Owner: {user.username}."
            )
        )
        self._name_rows(summary)
        if summary.perturbations_created:
            imported = Dataset.objects.get(owner=user, name=summary.dataset)
            stored, seconds = diffs_store_timed(dataset_id=imported.pk)
            self.stdout.write(f"Diffs of {stored} texts stored ({seconds:.2f} s).")

    def _name_rows(self, summary) -> None:
        if summary.publisher_validated:
            self.stdout.write("The dataset is marked already validated by its publisher.")
        if summary.repeated:
            dropped = sum(1 for r in summary.repeated if r.endswith(": dropped"))
            self.stdout.write(
                self.style.WARNING(
                    f"{len(summary.repeated)} rows repeat a row of another kind "
                    f"({dropped} dropped):"
                )
            )
            for row in summary.repeated:
                self.stdout.write(f"  {row}")
        if summary.unchanged:
            self.stdout.write(
                self.style.WARNING(
                    f"{len(summary.unchanged)} perturbations equal their original "
                    '(flagged "unchanged"):'
                )
            )
            for row in summary.unchanged:
                self.stdout.write(f"  {row}")
