"""`manage.py figures_doc`: write docs/figures.md from the figures' definitions."""

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand

from apps.analysis.definitions.document import figures_markdown

PATH = Path(settings.BASE_DIR) / "docs" / "figures.md"


class Command(BaseCommand):
    help = "Write docs/figures.md from the definitions in apps/analysis/definitions/."

    def handle(self, *args, **options) -> None:
        PATH.write_text(figures_markdown(), encoding="utf-8")
        self.stdout.write(f"wrote {PATH}")
