from django.core.management.base import BaseCommand

from apps.judging.loading import judging_load


class Command(BaseCommand):
    help = "Load the shipped metric judges and strategies (safe to run again)."

    def handle(self, *args, **options) -> None:
        counts = judging_load()
        self.stdout.write(", ".join(f"{name}: {n}" for name, n in counts.items()))
