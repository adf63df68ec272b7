"""`manage.py demo_model_server`: the demo's scripted model server, and its judge
(apps/judging/demo_model.py). `make demo` starts it beside the web server and the worker."""

from __future__ import annotations

from typing import Any

from aiohttp import web
from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.annotation.demo import DEMO_SLUG
from apps.annotation.models import Study
from apps.judging.demo_model import MODEL, NAME, DemoJudge, application, demo_judges_import
from apps.judging.models import Judge
from apps.judging.services import judge_save


class Command(BaseCommand):
    help = (
        "Serve the demo's scripted LLM judge (OpenAI-compatible, on loopback) on the demo "
        "study's texts, and make or update the researcher's judge 'demo judge' that calls it "
        "(and import the example judges of fixtures/judges/, calling it too)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--port", type=int, default=8765)

    def handle(self, *args: Any, **options: Any) -> None:
        study = Study.objects.filter(slug=DEMO_SLUG).first()
        if study is None:
            raise CommandError("no demo study: run `manage.py load_demo` first")
        base_url = f"http://127.0.0.1:{options['port']}/v1"
        judge = Judge.objects.filter(created_by=study.owner, name=NAME).first()
        endpoint = {"base_url": base_url, "model": MODEL, "max_concurrency": 8}
        judge_save(judge=judge or Judge(name=NAME), user=study.owner, endpoint=endpoint)
        self.stdout.write(f"'{NAME}' answers at {base_url} (model {MODEL})")
        for imported in demo_judges_import(owner=study.owner, base_url=base_url):
            self.stdout.write(f"Imported the example judge '{imported.name}' (calling it too)")
        web.run_app(
            application(DemoJudge.of_study(study)),
            host="127.0.0.1",
            port=options["port"],
            print=None,
            handle_signals=True,
        )
