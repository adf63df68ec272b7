from django.core.management.base import BaseCommand

from apps.annotation.demo import DEMO_PASSWORD, DEMO_USERS, demo_load


class Command(BaseCommand):
    help = "Create the demo users, dataset and study (run load_catalog first)."

    def handle(self, *args, **options):
        study = demo_load(audit_texts=True)
        self.stdout.write(f"Demo study '{study.name}' is ready.")
        for name, role in DEMO_USERS.items():
            self.stdout.write(f"  {role:<10} login: {name} / {DEMO_PASSWORD}")
