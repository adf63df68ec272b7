import sys
from collections.abc import Iterator
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.corpus.exporting import export_csv, export_jsonl
from apps.corpus.models import Dataset


class Command(BaseCommand):
    help = "Export a dataset's items and perturbations as JSONL or CSV."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--format", choices=("jsonl", "csv"), default="jsonl")
        parser.add_argument("--output", type=Path, help="Default: standard output.")

    def handle(self, *args, dataset: str, format: str, output: Path | None, **options):
        try:
            found = Dataset.objects.get(name=dataset)
        except Dataset.DoesNotExist as exc:
            raise CommandError(f"no dataset named '{dataset}'") from exc
        except Dataset.MultipleObjectsReturned as exc:
            raise CommandError(f"several researchers have a dataset named '{dataset}'") from exc
        chunks = export_jsonl(found) if format == "jsonl" else export_csv(found)
        if output is None:
            _write_to_stdout(chunks)
            return
        with output.open("w", encoding="utf-8", newline="") as handle:
            handle.writelines(chunks)
        self.stderr.write(f"wrote {output}")


def _write_to_stdout(chunks: Iterator[str]) -> None:
    """Write to standard output; a reader that stops early (`| head`) ends the export: its
    cursor is closed, and manage.py ends quietly (exit status 1, no traceback)."""
    try:
        for chunk in chunks:
            sys.stdout.write(chunk)
        sys.stdout.flush()
    except BrokenPipeError:
        getattr(chunks, "close", lambda: None)()  # its cursor closes while the database is open
        raise
