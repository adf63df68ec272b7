"""An audit of scripted judges, made through the real models (tests of report cards)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from django.core.management import call_command

from apps.judging.models import (
    AuditPart,
    AuditSubject,
    JudgeAudit,
    JudgeRun,
    PartKind,
    Strategy,
)
from tests.analysis.builders import pairwise, score, study_with_items
from tests.factories import llm_judge_create

KINDS = ["fbi-spelling-errors", "fbi-entity-errors", "fbi-score-invariant"]


def _strategy(family: str) -> Strategy:
    template = "{{text_a}} or {{text_b}}" if family == "pairwise" else "Rate {{text}}"
    return Strategy.objects.create(
        slug=f"s-{uuid.uuid4().hex[:6]}",
        name=f"{family} strategy",
        family=family,
        prompt_template=template,
        parser="pairwise" if family == "pairwise" else "score_only",
        both_orders=family == "pairwise",
    )


def _run(study, judge, strategy, owner) -> JudgeRun:
    return JudgeRun.objects.create(
        judge=judge, strategy=strategy, study=study, status="done", created_by=owner
    )


def scripted_subject(audit, study, items, perts, *, careless: bool, criterion: str, name: str):
    """A judge whose single-answer run misses spelling errors when careless (scores them as
    the original) and whose pairwise verdicts follow the order shown when careless."""
    judge = llm_judge_create(
        name=f"{name}-{uuid.uuid4().hex[:4]}", base_url="http://127.0.0.1:1", model="m"
    )
    single, pair = _strategy("single"), _strategy("pairwise")
    subject = AuditSubject.objects.create(audit=audit, judge=judge, strategy=single)
    run = _run(study, judge, single, audit.owner)
    pairs = _run(study, judge, pair, audit.owner)
    for k, item in enumerate(items):
        score(run, item, None, 5.0, criterion=criterion)
        for slug in KINDS:
            missed = slug == "fbi-score-invariant" or (careless and slug == "fbi-spelling-errors")
            value = 5.0 if missed else 2.0 + (k % 2)
            score(run, item, perts[slug][k], value, criterion=criterion)
            for first in (True, False):
                preferred = ("original" if first else "perturbed") if careless else "original"
                if slug != "fbi-score-invariant":
                    pairwise(
                        pairs, perts[slug][k], preferred, original_first=first, criterion=criterion
                    )
    AuditPart.objects.create(subject=subject, part=PartKind.FBI_SINGLE, run=run)
    AuditPart.objects.create(subject=subject, part=PartKind.FBI_PAIRWISE, run=pairs)
    AuditPart.objects.create(
        subject=subject, part=PartKind.ADVERSARIAL, skipped_reason="no search budget given"
    )
    return subject


def scripted_audit(n_items: int = 12, owner=None):
    from apps.catalog.models import Criterion

    study, items, perts = study_with_items(n_items, KINDS)
    criterion = Criterion.objects.filter(aspect__isnull=False).order_by("pk").first()
    assert criterion is not None
    study.criteria.add(criterion)
    audit = JudgeAudit.objects.create(owner=owner or study.owner, study=study, label="scripted")
    careful = scripted_subject(
        audit, study, items, perts, careless=False, criterion=criterion.key, name="careful"
    )
    careless = scripted_subject(
        audit, study, items, perts, careless=True, criterion=criterion.key, name="careless"
    )
    return audit, careful, careless


#: The kinds the careless judge of ``command_audits`` misses.
CARELESS_MISSES = {"negation", "different-entity", "conflicting-fact", "word-exchange"}


@contextmanager
def command_audits() -> Iterator[tuple[Callable[..., None], Any]]:
    """`judge_audit` as a lab's CI runs it on the demo study (needs a Celery worker): yields
    ``audit(name, *options)``, which audits the "careful" or the "careless" judge (answering
    from the fake OpenAI server; careless misses ``CARELESS_MISSES``), and the server."""
    from apps.annotation.demo import demo_load
    from apps.judging.loading import judging_load
    from tests.factories import llm_judge_save
    from tests.fakes.openai_server import FakeOpenAIServer
    from tests.fakes.scripted_judges import ScriptedJudges

    study = demo_load()
    judging_load()
    single = Strategy.objects.filter(slug="cd-zero-shot").latest("version")
    with FakeOpenAIServer(reply=ScriptedJudges.of(study, CARELESS_MISSES)) as server:
        judges = {
            name: llm_judge_save(
                user=study.owner,
                name=name,
                base_url=server.base_url,
                model=name,
                max_concurrency=8,
                timeout_s=10.0,
            )
            for name in ("careful", "careless")
        }

        def audit(name: str, *options: str) -> None:
            call_command(
                "judge_audit",
                "--owner",
                study.owner.username,
                "--study",
                str(study.pk),
                "--judge",
                f"{judges[name].pk}:{single.pk}",
                "--no-vetted-only",
                "--yes",  # as a lab's CI runs it: the estimate printed, no one to confirm
                "--wait",
                "--timeout",
                "300",
                *options,
            )

        yield audit, server
