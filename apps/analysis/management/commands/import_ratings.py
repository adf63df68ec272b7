from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.analysis.ratings_import import human_ratings_import
from apps.corpus.models import Dataset
from apps.inputs.problems import ImportFailed


class Command(BaseCommand):
    help = "Import per-annotator ratings (item, criterion, rater, score) into a dataset."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path)
        parser.add_argument("--dataset", required=True)
        parser.add_argument(
            "--scale",
            nargs=2,
            type=float,
            metavar=("MIN", "MAX"),
            help="The rating scale; default: the lowest and highest score seen.",
        )
        parser.add_argument("--source", default="")

    def handle(self, *args, path: Path, dataset: str, scale, source: str, **options):
        try:
            found = Dataset.objects.get(name=dataset)
        except Dataset.DoesNotExist as exc:
            raise CommandError(f"no dataset named '{dataset}'") from exc
        except Dataset.MultipleObjectsReturned as exc:
            raise CommandError(f"several researchers have a dataset named '{dataset}'") from exc
        try:
            summary = human_ratings_import(
                path=path,
                dataset=found,
                scale=(scale[0], scale[1]) if scale else None,
                source=source,
            )
        except ImportFailed as exc:
            raise CommandError(f"Nothing was imported.\n{exc}") from exc
        lo, hi = summary.scale
        self.stdout.write(
            self.style.SUCCESS(
                f"{summary.created} ratings imported on a {lo:g}-{hi:g} scale, "
                f"{summary.existing} were already there."
            )
        )
        for warning in summary.warnings:
            self.stderr.write(self.style.WARNING(f"WARNING: {warning}"))
