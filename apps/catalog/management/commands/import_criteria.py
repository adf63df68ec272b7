from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.catalog.criteria_import import criteria_import
from apps.inputs.problems import ImportFailed


class Command(BaseCommand):
    help = "Import criteria from a JSON file: aspect → {description label → text}."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path)
        parser.add_argument("--source", default="", help="Label for the wording's origin.")
        parser.add_argument("--scale", nargs=2, type=int, default=(1, 5), metavar=("MIN", "MAX"))

    def handle(self, *args, path: Path, source: str, scale: tuple[int, int], **options):
        try:
            summary = criteria_import(path=path, source=source, scale=(scale[0], scale[1]))
        except ImportFailed as exc:
            raise CommandError(f"Nothing was imported.\n{exc}") from exc
        self.stdout.write(
            self.style.SUCCESS(
                f"{summary.created} criteria imported, {summary.existing} were already there."
            )
        )
