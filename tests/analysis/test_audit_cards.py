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


def _line(report, figure):
    return next(r for r in _table(report, "card") if r["figure"].startswith(figure))


def test_a_careless_judges_card_shows_what_it_missed_first(catalog):
    _audit, careful, careless = scripted_audit()
    card = build_card(careless)
    missed = _line(card, "Single answer: perturbations not scored lower")
    assert missed["value"] == 0.5  # spelling errors (12 of 24) scored as the original
    assert missed["n"] == 24 and missed["ci_low"] < 0.5 < missed["ci_high"]
    assert missed["evidence"].startswith("/judging/runs/")
    flips = _line(card, "Position bias")
    assert flips["value"] == 1.0 and flips["n"] == 24
    kept = _line(card, "Score-invariant kinds: score kept")
    assert kept["value"] == 1.0 and kept["n"] == 12
    worst = _table(card, "worst_kinds")
    assert worst[0]["kind"] == "fbi-spelling-errors" and worst[0]["rate"] == 1.0
    examples = _table(card, "worst_examples")
    assert examples and examples[0]["kind"] == "fbi-spelling-errors"
    assert examples[0]["evidence"].startswith("/api/v1/perturbations/")
    attack = _line(card, "Attack success R+")
    assert attack["value"] is None and "skipped, no search budget given" in attack["note"]
    reasons = {r["part"]: r["reason"] for r in _table(card, "not_measured")}
    assert "no search budget given" in reasons["Adversarial search"]
    assert "not part of this audit" in reasons["DHP discernment"]
    good = build_card(careful)
    assert _line(good, "Single answer: perturbations not scored lower")["value"] == 0.0
    assert _line(good, "Position bias")["value"] == 0.0


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
    side = {r["figure"]: r for r in _table(report, "side_by_side")}
    assert side["Single answer: perturbations not scored lower"][f"{careless} value"] == 0.5
    assert any(f.name == "detection_failure" for s in report.sections for f in s.figures)


def test_audit_json_is_plain_json_of_every_card_and_the_comparison(catalog):
    import json

    audit, careful, careless = scripted_audit(n_items=4)
    data = audit_json(audit)
    assert [c["subject"]["id"] for c in data["cards"]] == [careful.pk, careless.pk]
    assert data["comparison"]["name"] == "audit-comparison"
    assert json.loads(json.dumps(data)) == data
    assert audit_json(audit) == data  # from the snapshots, the same again
