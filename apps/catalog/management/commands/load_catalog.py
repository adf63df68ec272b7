from django.core.management.base import BaseCommand

from apps.catalog.loading import catalog_load


class Command(BaseCommand):
    help = "Load the shipped aspect tree, criteria, tasks and perturbation kinds (idempotent)."

    def handle(self, *args, **options):
        counts = catalog_load()
        self.stdout.write(", ".join(f"{n} {what}" for what, n in counts.items()))
