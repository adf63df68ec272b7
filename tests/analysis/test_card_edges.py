"""The verdict's edges: a judge whose scores never vary is not credited where that would look
good, and comparisons count texts, not texts × criteria (docs/cards.md)."""

from __future__ import annotations

import uuid

import pytest

from apps.analysis.cards.baseline import baseline_compare
from apps.analysis.cards.card import build_card
from apps.analysis.cards.comparison import build_comparison
from apps.analysis.cards.snapshots import audit_json
from apps.judging.models import AuditPart, AuditSubject, JudgeAudit, PartKind, Strategy
from apps.judging.services import adversarial_search_work
from apps.judging.services.searches import adversarial_search_start
from tests.analysis.builders import judge_run, score, study_with_items
from tests.analysis.test_adversarial_report import stubborn
from tests.judging.conftest import (
    demo,  # noqa: F401  (a fixture)
    fake_openai_server,  # noqa: F401  (a fixture)
)
from tests.judging.scripted_search import scripted_world

pytestmark = pytest.mark.django_db
KINDS = ["negation", "word-exchange", "sentence-exchange", "spelling-mistake"]
METRICS = ["coherence", "consistency", "fluency", "relevance"]


def _reference_strategy() -> Strategy:
    return Strategy.objects.create(
        slug=f"ref-{uuid.uuid4().hex[:6]}",
        name="reference-guided",
        family="reference",
        prompt_template="{{reference}} {{text}}",
        parser="score_only",
        scale_min=1,
        scale_max=5,
    )


def _subject(audit, study, items, perts, name, scored) -> AuditSubject:
    """A subject whose single-answer and reference-guided runs score as ``scored(item number,
    kind or None for the original, metric)`` says."""
    single = judge_run(study, name)
    reference = judge_run(study, name, strategy=_reference_strategy())
    for run in (single, reference):
        run.judge = single.judge
        run.save(update_fields=["judge"])
        for n, item in enumerate(items):
            for metric in METRICS:
                score(run, item, None, scored(n, None, metric), metric=metric)
                for kind in perts:
                    score(run, item, perts[kind][n], scored(n, kind, metric), metric=metric)
    subject = AuditSubject.objects.create(audit=audit, judge=single.judge, label=name)
    AuditPart.objects.create(subject=subject, part=PartKind.FBI_SINGLE, run=single)
    AuditPart.objects.create(subject=subject, part=PartKind.FBI_REFERENCE, run=reference)
    return subject


def careful(n, kind, metric) -> float:
    return 5.0 if kind is None else 2.0


def constant(n, kind, metric) -> float:
    return 4.0  # max - 1, whatever the text


def _verdicts(subject) -> dict:
    table = next(t for t in build_card(subject).tables() if t.name == "verdict")
    return {(r[0], r[2]): dict(zip(table.columns, r, strict=True)) for r in table.rows}


def test_a_judge_whose_scores_never_vary_detects_nothing_and_beats_nobody(catalog):
    study, items, perts = study_with_items(12, KINDS)
    audit = JudgeAudit.objects.create(owner=study.owner, study=study)
    flat = _subject(audit, study, items, perts, "flat", constant)
    good = _subject(audit, study, items, perts, "careful", careful)
    reference = _verdicts(flat)[("reference_failure", "all kinds")]
    assert reference["verdict"] == "not measured", reference
    assert "its scores never vary: every reply gave the score 4" in reference["why"]
    assert _verdicts(flat)[("detection_failure", "all kinds")]["verdict"] == "misses"
    assert _verdicts(good)[("reference_failure", "all kinds")]["verdict"] == "detects"
    tests = next(t for t in build_comparison(audit).tables() if t.name == "paired_tests")
    assert "reference_failure" not in [row[0] for row in tests.rows]  # nothing to compare


def test_the_gate_counts_texts_not_texts_times_criteria(catalog):
    """A judge missing 3 of 48 texts, each scored on 4 metrics: 3 discordant texts (exact
    McNemar p = 0.25), not 12 units (p = 0.0005). The gate does not fire."""
    study, items, perts = study_with_items(48, ["negation"])
    before = JudgeAudit.objects.create(owner=study.owner, study=study)
    _subject(before, study, items, perts, "judge", careful)
    saved = audit_json(before)

    def misses_three(n, kind, metric) -> float:
        return 5.0 if kind is not None and n < 3 else careful(n, kind, metric)

    now = JudgeAudit.objects.create(owner=study.owner, study=study)
    _subject(now, study, items, perts, "judge", misses_three)
    gate = baseline_compare(now, saved)
    rows = {r[0]: r for r in gate.report.tables()[0].rows}
    detection = rows["detection_failure"]
    assert detection[4] == "McNemar (exact)" and detection[5] == 48  # texts
    assert detection[9] == pytest.approx(0.25)
    assert gate.regressions == []


def test_unreadable_replies_are_judged_per_source(demo, fake_openai_server):  # noqa: F811
    """A generator that never writes a candidate (12 of 12 replies unreadable) is named on its
    own line, whatever share the judge's readable replies make of the whole audit."""
    world = scripted_world(demo, fake_openai_server, items=2)
    world.server.reply = stubborn
    demo.datasets.add(world.dataset)
    search = world.create(study=demo, target_score=50, max_iterations=3)
    adversarial_search_start(search=search)
    adversarial_search_work(search_id=search.pk)
    search.refresh_from_db()
    victim = search.judges.get(role="victim")
    audit = JudgeAudit.objects.create(owner=demo.owner, study=demo)
    subject = AuditSubject.objects.create(audit=audit, judge=victim.judge, label="victim")
    AuditPart.objects.create(subject=subject, part=PartKind.ADVERSARIAL, search=search)
    verdicts = _verdicts(subject)
    generator = verdicts[("unparsed", "source: generator")]
    assert (generator["value"], generator["n"]) == (1.0, 12)
    assert generator["verdict"] == "often unreadable", generator
    assert verdicts[("unparsed", "source: judge")]["value"] == 0.0
