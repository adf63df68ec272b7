"""Judging fixtures: the demo study with the shipped judges and strategies, LLM judges on the
local fake OpenAI-compatible server, and a way to run a judge run in this process through the
same code a worker task runs."""

from __future__ import annotations

import socket
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from apps.annotation.demo import demo_load
from apps.annotation.models import Study
from apps.catalog.models import Criterion
from apps.judging.loading import judging_load
from apps.judging.models import Judge, JudgeRun, RunStatus, Strategy
from apps.judging.services import judge_run_create, judge_run_plan, judge_run_work
from tests.factories import llm_judge_save
from tests.fakes.fixtures import fake_openai_server as fake_openai_server  # the shared fixture
from tests.fakes.openai_server import FakeOpenAIServer


@pytest.fixture
def demo(catalog) -> Study:
    """The demo study (6 items, 14 perturbations) with the shipped judges and strategies."""
    study = demo_load()
    judging_load()
    return study


def strategy(slug: str) -> Strategy:
    return Strategy.objects.filter(slug=slug).latest("version")


def llm_judge(server: FakeOpenAIServer, **options: Any) -> Judge:
    fields: dict[str, Any] = {
        "name": f"fake-{Judge.objects.count()}",
        "base_url": server.base_url,
        "model": "judge-model",
        "max_concurrency": 4,
        "timeout_s": 5.0,
        "max_attempts": 3,
    } | options
    return llm_judge_save(**fields)


def new_run(study: Study, judge: Judge, slug: str | None = None, **selection: Any) -> JudgeRun:
    """A run recorded but not queued (tests work it in-process with ``work``); unless the
    test says otherwise, over every perturbation (the demo study has no vettings)."""
    selection.setdefault("vetted_only", False)
    run = judge_run_create(
        user=study.owner,
        judge=judge,
        strategy=strategy(slug) if slug else None,
        study=study,
        start=False,
        **selection,
    )
    JudgeRun.objects.filter(pk=run.pk).update(status=RunStatus.RUNNING)
    run.refresh_from_db()
    return run


def work(run: JudgeRun, share: int | None = None) -> JudgeRun:
    """Plan and work the run here, as the worker task does (without queueing helpers)."""
    judge_run_plan(run_id=run.pk)
    judge_run_work(run_id=run.pk, share=share or run.judge.max_concurrency)
    run.refresh_from_db()
    return run


@pytest.fixture
def criteria(demo) -> Callable[..., list]:
    def pick(*aspects: str, description_type: str = "default") -> list:
        chosen = Criterion.objects.filter(
            source="discern", aspect__slug__in=aspects, description_type=description_type
        )
        return list(chosen.order_by("aspect__position"))

    return pick


@pytest.fixture
def own_queue() -> Iterator[tuple[str, str]]:
    """A queue and node name of our own; tasks queued by this test go there."""
    from workers.celery import app

    queue, node = f"kill-{uuid.uuid4().hex[:8]}", f"judge-kill@{socket.gethostname()}"
    previous_queue = app.conf.task_default_queue
    app.conf.task_default_queue = queue
    yield queue, node
    app.conf.task_default_queue = previous_queue
