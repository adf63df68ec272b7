"""`manage.py import_judge FILE --owner USERNAME [--dry-run] [--base-url URL]`: the judges a
promptfoo config or an Inspect AI scorer description describes (docs/import.md), their
mapping printed field by field, then created (nothing with --dry-run, nothing on an error)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.accounts.models import User
from apps.judging.importing import MAX_BYTES, ImportRefused
from apps.judging.services import ImportPreview, judge_import, judge_import_preview


class Command(BaseCommand):
    help = (
        "Import judges from a promptfoo config (llm-rubric, g-eval, model-graded-closedqa "
        "assertions) or an Inspect AI scorer description: prints what maps to what, then "
        "creates each judge with its endpoint and strategy (--dry-run: creates nothing)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path)
        parser.add_argument("--owner", required=True, help="the researcher the judges are for")
        parser.add_argument("--dry-run", action="store_true", help="print the mapping only")
        parser.add_argument("--base-url", default="", help="every judge's server address")

    def handle(self, *args: Any, **options: Any) -> None:
        owner = User.objects.filter(username=options["owner"]).first()
        if owner is None or not owner.is_researcher:
            raise CommandError(f"no researcher named {options['owner']}")
        path: Path = options["file"]
        data = _read(path)
        given: dict[str, Any] = {"owner": owner, "data": data, "filename": path.name}
        given["base_url"] = options["base_url"]
        try:
            self._print(judge_import_preview(**given))
            if options["dry_run"]:
                self.stdout.write("Dry run: nothing was created.")
                return
            judges = judge_import(**given)
        except ImportRefused as refused:
            problems = ["Not imported (nothing created):", *refused.problems]
            raise CommandError("\n".join(problems)) from None
        for judge in judges:
            self.stdout.write(f"Created judge {judge.name} (its endpoint and strategy too).")

    def _print(self, preview: ImportPreview) -> None:
        name = preview.format_name
        self.stdout.write(f"{name[0].upper()}{name[1:]}: {len(preview.judges)} judge(s).")
        for item in preview.judges:
            self.stdout.write(f"\nJudge {item.judge.name!r} (strategy {item.slug}):")
            for row in item.rows:
                note = f"  ({row.note})" if row.note else ""
                target = row.target or "(nothing)"
                value = row.value.replace("\n", "\\n")
                value = value if len(value) <= 80 else value[:77] + "..."
                self.stdout.write(f"  {row.source} -> {target} = {value}{note}")
            self.stdout.write("  Prompt for a sample text:")
            for message in item.messages:
                self.stdout.write(f"  --- {message['role']} ---\n{message['content']}")


def _read(path: Path) -> bytes:
    try:
        with path.open("rb") as handle:
            return handle.read(MAX_BYTES + 1)
    except OSError as error:
        raise CommandError(f"{path}: {error.strerror}") from None
