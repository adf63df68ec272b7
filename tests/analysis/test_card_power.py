"""Power before verdict: a perfect judge on one text per kind cannot reach D = 1 (a one-sided
Wilcoxon test on one pair gives p = 0.5 at best), so its card says "too few texts to tell",
how far a perfect judge would get and how many texts would do; never "misses"."""

import pytest

from apps.analysis.cards.card import build_card
from apps.judging.models import AuditPart, AuditSubject, JudgeAudit, PartKind
from tests.analysis.builders import judge_run, score, study_with_items

pytestmark = pytest.mark.django_db
KINDS = ["negation", "word-exchange", "sentence-exchange", "spelling-mistake"]
METRICS = ["coherence", "consistency", "fluency", "relevance"]


def _card(n_items: int, careless: bool = False):
    """A perfect judge (every original 5, every perturbed text 2), or a careless one (every
    perturbed text scored as its original, 3 or 4)."""
    study, items, perts = study_with_items(n_items, KINDS)
    run = judge_run(study)
    for n, item in enumerate(items):
        original = 3.0 + n % 2 if careless else 5.0
        for metric in METRICS:
            score(run, item, None, original, metric=metric)
            for kind in KINDS:
                score(run, item, perts[kind][n], original if careless else 2.0, metric=metric)
    audit = JudgeAudit.objects.create(owner=study.owner, study=study)
    subject = AuditSubject.objects.create(audit=audit, judge=run.judge)
    AuditPart.objects.create(subject=subject, part=PartKind.DISCERNMENT, run=run)
    AuditPart.objects.create(subject=subject, part=PartKind.FBI_SINGLE, run=run)
    card = build_card(subject)
    table = next(t for t in card.tables() if t.name == "verdict")
    return {(r[0], r[2]): dict(zip(table.columns, r, strict=True)) for r in table.rows}


def test_one_text_per_kind_is_too_few_to_tell_not_a_blind_judge(catalog):
    verdicts = _card(1)
    for key in ("D_min", "D_avg"):
        line = verdicts[(key, "all kinds")]
        assert line["verdict"] == "too few texts to tell", line
        assert line["value"] == pytest.approx(0.129, abs=1e-3)  # all a perfect judge reaches
        assert "a perfect judge would reach D = 0.129" in line["why"]
        assert "5 texts per kind would suffice" in line["why"]
    detection = verdicts[("detection_failure", "all kinds")]
    assert detection["verdict"] == "too few texts to tell" and detection["value"] == 0.0
    assert "N = 4 texts" in detection["why"] and "16 texts would suffice" in detection["why"]


def test_with_enough_texts_the_same_judge_detects(catalog):
    verdicts = _card(16)
    assert verdicts[("D_min", "all kinds")]["verdict"] == "detects"
    assert verdicts[("D_min", "all kinds")]["value"] > 1
    assert verdicts[("detection_failure", "all kinds")]["verdict"] == "detects"
    scoped = sorted(k[1] for k in verdicts if k[0] == "detection_failure" and k[1] != "all kinds")
    assert scoped == ["aspect: Coherence", "aspect: Grammaticality", "aspect: Non-contradiction"]
    grammar = verdicts[("detection_failure", "aspect: Grammaticality")]  # 2 kinds x 16 texts
    assert (grammar["texts"], grammar["n"]) == (32, 128)  # each scored on 4 metrics


def test_a_proven_miss_is_a_miss_however_few_the_texts(catalog):
    """9 of 9 texts missed: the interval lies wholly above the threshold, so the judge misses,
    though 9 texts are too few for a perfect judge to prove it detects."""
    verdicts = _card(9, careless=True)
    coherence = verdicts[("detection_failure", "aspect: Coherence")]  # one kind x 9 texts
    assert coherence["texts"] == 9 and coherence["value"] == 1.0
    assert coherence["ci_low"] > coherence["threshold"]
    assert coherence["verdict"] == "misses", coherence
    assert "above the threshold" in coherence["why"]
