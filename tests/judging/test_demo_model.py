"""The demo's model server: its judge misses spelling mistakes under its default prompt and
catches them under the rubric, so the demo shows an improvement end to end (docs/improve.md,
"In the demo"). Served here on loopback as `make demo` serves it."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator

import pytest
from aiohttp import web

from apps.annotation.demo import demo_load
from apps.judging.demo_model import MODEL, NAME, DemoJudge, application
from apps.judging.loading import judging_load
from apps.judging.models import AuditPart, Judge, PartKind, Strategy
from apps.judging.services import judge_save
from apps.judging.services.audits import audit_plan
from tests.analysis.test_improvement import _improve, _work

pytestmark = pytest.mark.django_db


@pytest.fixture
def served(catalog) -> Iterator[tuple]:
    """The demo study, and its judge's server on a free loopback port."""
    study = demo_load(audit_texts=True)
    judging_load()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    loop = asyncio.new_event_loop()
    runner = web.AppRunner(application(DemoJudge.of_study(study)))
    loop.run_until_complete(runner.setup())
    loop.run_until_complete(web.TCPSite(runner, "127.0.0.1", port).start())
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    endpoint = {"base_url": f"http://127.0.0.1:{port}/v1", "model": MODEL, "max_concurrency": 8}
    judge = judge_save(judge=Judge(name=NAME), user=study.owner, endpoint=endpoint)
    yield study, judge
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)


def test_the_demo_judge_misses_spelling_mistakes_until_the_rubric(served):
    study, judge = served
    current = Strategy.objects.filter(slug="cd-zero-shot").latest("version")
    audit = audit_plan(owner=study.owner, study=study, subjects=[(judge, current)])
    subject = audit.subjects.get()
    _work(AuditPart.objects.get(subject=subject, part=PartKind.FBI_SINGLE).run)
    improvement = _improve(subject)
    result = improvement.result
    assert result["recommended"], result
    assert result["winner_label"] == "FBI single: rubric"
    assert result["closed"] == ["Spelling mistake"]
