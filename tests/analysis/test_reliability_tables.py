"""The judge reliability report rebuilds the papers' tables: D^EW_min/avg without the
score-invariant kinds (DHP Fig. 4), FBI failure rates per ability with intervals (FBI Table 3),
and one measurement counted once."""

import math

import pytest

from apps.analysis.reports import judge_reliability
from apps.analysis.stats.discernment import discernment, wilcoxon_p
from tests.analysis.builders import prefer, score, strategy_run, study_with_items

pytestmark = pytest.mark.django_db


def _rows(report, name):
    table = next(t for t in report.tables() if t.name == name)
    return {row[0]: dict(zip(table.columns, row, strict=True)) for row in table.rows}


def test_d_min_leaves_out_score_invariant_kinds(catalog):
    n = 10
    study, items, perts = study_with_items(n, ["fbi-spelling-errors", "fbi-score-invariant"])
    run = strategy_run(study)
    for k, item in enumerate(items):
        score(run, item, None, 5.0)
        score(run, item, perts["fbi-spelling-errors"][k], 4.0 - (k % 2))
        score(run, item, perts["fbi-score-invariant"][k], 5.0)  # rightly unchanged
    report = judge_reliability.build(run)
    kinds = _rows(report, "discernment")
    assert kinds["fbi-score-invariant"]["D"] == 0.0
    assert kinds["fbi-score-invariant"]["score_invariant"] == "yes"
    summary = _rows(report, "discernment_summary")
    # D_min is the spelling kind's D: the invariant kind's rightful 0 does not count
    assert summary["D_min"]["value"] == kinds["fbi-spelling-errors"]["D"] > 1
    assert summary["D_min"]["kinds"] == 1
    failures = _rows(report, "failure_rates")
    assert failures["fbi-score-invariant"]["measure"] == "success: score equal"
    assert failures["fbi-score-invariant"]["rate"] == 1.0
    assert failures["fbi-spelling-errors"]["name"]  # the kind's name, not an id


def test_a_prompt_without_the_metric_is_one_test_not_m(catalog):
    # A run planned before planning knew it: the same question asked once per metric. The
    # analysis sees one measurement: one Wilcoxon test over n texts, not four over 4n.
    n = 8
    study, items, perts = study_with_items(n, ["negation"])
    run = strategy_run(study)
    assert run.strategy.names_quality is False
    orig, pert = [], []
    for k, item in enumerate(items):
        o, p = 4.0, 4.0 - (k % 3 == 0) + (k == 7)
        orig.append(o)
        pert.append(p)
        for metric in ("coherence", "consistency", "fluency", "relevance"):
            score(run, item, None, o, metric=metric)
            score(run, item, perts["negation"][k], p, metric=metric)
    report = judge_reliability.build(run)
    row = _rows(report, "discernment")["negation"]
    assert (row["n"], row["M"]) == (n, 1)
    assert row["p"] == pytest.approx(wilcoxon_p(orig, pert), rel=1e-2)
    assert row["D"] == pytest.approx(discernment(wilcoxon_p(orig, pert)), abs=1e-3)
    assert list(_rows(report, "deltas")) == ["negation"]
    assert _rows(report, "deltas")["negation"]["dimension"] == "overall"
    assert _rows(report, "failure_rates")["negation"]["n"] == n


def test_reference_guided_rates_per_ability(catalog):
    n = 6
    study, items, perts = study_with_items(n, ["fbi-spelling-errors", "fbi-entity-errors"])
    run = strategy_run(study, family="reference", template="Rate {{text}} against {{reference}}")
    for k, item in enumerate(items):
        score(run, item, perts["fbi-spelling-errors"][k], 5.0 if k < 3 else 3.0)
        score(run, item, perts["fbi-entity-errors"][k], 5.0 if k < 1 else 2.0)
        score(run, item, None, 5.0)
    report = judge_reliability.build(run)
    abilities = _rows(report, "failure_by_ability")
    assert abilities["long-form"]["rate"] == 0.5 and abilities["long-form"]["n"] == n
    assert abilities["factual"]["rate"] == pytest.approx(1 / 6, abs=1e-4)
    for row in abilities.values():
        assert row["ci_low"] <= row["rate"] <= row["ci_high"]


def test_pairwise_table_names_kinds_and_has_abilities(catalog):
    n = 4
    study, items, perts = study_with_items(n, ["fbi-spelling-errors", "fbi-entity-errors"])
    run = strategy_run(
        study, family="pairwise", template="{{text_a}} or {{text_b}}", both_orders=True
    )
    for k, item in enumerate(items):
        for first in (True, False):
            prefer(run, item, perts["fbi-spelling-errors"][k], first, "original")
            prefer(
                run, item, perts["fbi-entity-errors"][k], first, "perturbed" if k else "original"
            )
    report = judge_reliability.build(run)
    pairwise = _rows(report, "pairwise")
    assert set(pairwise) == {"fbi-entity-errors", "fbi-spelling-errors"}  # slugs, not ids
    assert pairwise["fbi-entity-errors"]["not_original"] == 0.75
    assert pairwise["fbi-entity-errors"]["judgements"] == 2 * n
    assert pairwise["fbi-spelling-errors"]["detected_both"] == 1.0
    by_ability = _rows(report, "pairwise_by_ability")
    assert by_ability["factual"]["detected_both"] == 0.25
    assert by_ability["factual"]["pairs"] == n
    low, high = (
        by_ability["factual"]["detected_both_ci_low"],
        by_ability["factual"]["detected_both_ci_high"],
    )
    assert low <= 0.25 <= high and not math.isnan(high)


def test_a_metric_counts_only_on_items_of_its_task(catalog):
    from apps.catalog.models import Task
    from tests.analysis.builders import judge_run

    study, items, perts = study_with_items(4, ["negation"])
    items[0].task = Task.objects.get(slug="paraphrase")
    items[0].save()
    run = judge_run(study)
    for k, item in enumerate(items):
        score(run, item, None, 5.0, metric="coherence")
        score(run, item, perts["negation"][k], 3.0, metric="coherence")
    report = judge_reliability.build(run)
    assert _rows(report, "deltas")["negation"]["n"] == 3  # the paraphrase item is left out
