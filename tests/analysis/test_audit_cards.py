"""Report cards and judges side by side, built from an audit's runs: each line with N, an
interval and a link; the worst kind first; skipped parts with their reason; paired tests that
call the careless judge worse where it was scripted to be, and only there."""

import pytest

from apps.analysis.cards.card import build_card
from apps.analysis.cards.comparison import build_comparison
from apps.analysis.cards.snapshots import audit_json
from tests.analysis.audit_builders import scripted_audit

pytestmark = pytest.mark.django_db


def _table(report, name):
    table = next(t for t in report.tables() if t.name == name)
    return [dict(zip(table.columns, row, strict=True)) for row in table.rows]


def _line(report, key):
    return next(r for r in _table(report, "card") if r["key"] == key)


def _verdict(report, key, scope="all kinds"):
    return next(r for r in _table(report, "verdict") if (r["key"], r["scope"]) == (key, scope))


def test_a_careless_judges_card_shows_what_it_missed_first(catalog):
    _audit, careful, careless = scripted_audit()
    card = build_card(careless)
    missed = _line(card, "detection_failure")
    assert missed["figure"] == "Errors missed: perturbed text not scored lower than its original"
    assert missed["value"] == 0.5  # spelling errors (12 of 24) scored as the original
    assert missed["n"] == 24 and missed["ci_low"] < 0.5 < missed["ci_high"]
    assert missed["evidence"].startswith("/judging/runs/")
    flips = _line(card, "position_flip")
    assert flips["value"] == 1.0 and flips["n"] == 24
    kept = _line(card, "invariant_success")
    assert kept["value"] == 1.0 and kept["n"] == 12
    worst = [r for r in _table(card, "worst_kinds") if r["paradigm"] == "FBI single answer"]
    spelling = worst[0]["kind"]  # the worst single-answer kind first, by its name
    assert spelling == "Spelling errors" and worst[0]["value"] == 1.0
    assert worst[0]["figure"] == missed["figure"] and worst[0]["n"] == 12
    assert [r["kind"] for r in worst[1:]] == ["Entity errors", "Score invariant"]
    examples = _table(card, "worst_kind_examples")
    assert [e["kind"] for e in examples] == [spelling]  # the only kind it missed
    assert examples[0]["original_score"] == 5.0 == examples[0]["perturbed_score"]
    assert examples[0]["text_link"].startswith("/api/v1/perturbations/")
    attack = _line(card, "attack_success_r_minus")
    assert attack["value"] is None and "skipped, no search budget given" in attack["note"]
    # the verdict: what was scripted, in words
    assert _verdict(card, "detection_failure")["verdict"] == "misses"
    assert _verdict(card, "position_flip")["verdict"] == "order-biased"
    kept = _verdict(card, "invariant_success")  # 12 texts: even a perfect judge's interval
    assert kept["verdict"] == "too few texts to tell"  # reaches only 12/(12 + z²) = 0.758
    assert "0.758" in kept["why"] and "16 texts would suffice" in kept["why"]
    search = _verdict(card, "attack_success_r_minus")
    assert search["verdict"] == "not measured" and "no search budget" in search["why"]
    reasons = {r["part"]: r["reason"] for r in _table(card, "not_measured")}
    assert "no search budget given" in reasons["Adversarial search"]
    assert "not part of this audit" in reasons["DHP discernment"]
    good = build_card(careful)
    assert _line(good, "detection_failure")["value"] == 0.0
    assert _line(good, "position_flip")["value"] == 0.0
    # 0 of 24 texts: the interval's high end z²/(24 + z²) = 0.138 is under the 0.2 threshold
    detects = _verdict(good, "detection_failure")
    assert detects["verdict"] == "detects" and detects["ci_high"] == pytest.approx(0.138, abs=1e-4)
    assert _verdict(good, "position_flip")["verdict"] == "order-stable"
    assert not _table(good, "worst_kind_examples")


def test_the_comparison_marks_the_careless_judge_worse_only_where_scripted(catalog):
    audit, _careful, careless = scripted_audit()
    report = build_comparison(audit)
    tests = {r["key"]: r for r in _table(report, "paired_tests")}
    assert tests["detection_failure"]["test"] == "McNemar (exact)"
    assert tests["detection_failure"]["significant"] == "yes"
    assert tests["detection_failure"]["worse"] == str(careless)
    assert tests["detection_failure"]["n"] == 24
    assert tests["position_flip"]["significant"] == "yes"
    assert tests["position_flip"]["worse"] == str(careless)
    assert tests["invariant_success"]["significant"] == "no"
    assert tests["invariant_success"]["p_value"] == 1.0
    for row in tests.values():
        assert row["p_holm"] >= row["p_value"]
    side = {r["key"]: r for r in _table(report, "side_by_side")}
    assert side["detection_failure"][f"{careless}: value"] == 0.5
    figure = next(f for s in report.sections for f in s.figures)  # one panel per figure
    assert figure.name == "figures" and "N under each" in figure.caption


def test_audit_json_is_plain_json_of_every_card_and_the_comparison(catalog):
    import json

    audit, careful, careless = scripted_audit(n_items=4)
    data = audit_json(audit)
    assert [c["subject"]["id"] for c in data["cards"]] == [careful.pk, careless.pk]
    assert data["comparison"]["name"] == "audit-comparison"
    assert json.loads(json.dumps(data)) == data
    assert audit_json(audit) == data  # from the snapshots, the same again
