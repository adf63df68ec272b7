"""The judge reliability report rebuilds the papers' tables: D^EW_min/avg without the
score-invariant kinds (DHP Fig. 4), FBI failure rates per ability with intervals over texts
(FBI Table 3), score-invariant results per ability, pairwise ties labelled as successes,
reference-guided rates without originals, the score drop's sign and label, correlations with
their N and Fisher interval, and one measurement counted once."""

import math

import pytest

from apps.analysis.reports import judge_reliability
from apps.analysis.stats.discernment import discernment, wilcoxon_p
from tests.analysis.builders import prefer, score, strategy_run, study_with_items

pytestmark = pytest.mark.django_db
#: A prompt naming the criterion: each criterion is its own measurement.
BY_CRITERION = "Rate {{text}} on {{quality}}"
FLUENCY, COHERENCE = "discern-fluency-default", "discern-coherence-default"
Z = 1.959963984540054


def wilson(successes: float, n: int) -> tuple[float, float]:
    """The Wilson score interval by its formula (methods §8)."""
    p, z2 = successes / n, Z * Z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def _table(report, name):
    return next(t for t in report.tables() if t.name == name)


def _rows(report, name):
    table = _table(report, name)
    return {row[0]: dict(zip(table.columns, row, strict=True)) for row in table.rows}


def _by_measure(report, name):
    table = _table(report, name)
    at = table.columns.index("measure")
    return {(row[0], row[at]): dict(zip(table.columns, row, strict=True)) for row in table.rows}


def test_d_min_leaves_out_score_invariant_kinds(catalog):
    n = 10
    study, items, perts = study_with_items(n, ["fbi-spelling-errors", "fbi-score-invariant"])
    run = strategy_run(study)
    for k, item in enumerate(items):
        score(run, item, None, 5.0)
        score(run, item, perts["fbi-spelling-errors"][k], 4.0 - (k % 2))
        score(run, item, perts["fbi-score-invariant"][k], 5.0)  # rightly unchanged
    report = judge_reliability.build(run)
    kinds = _rows(report, "discernment")  # kinds by name, not slug
    assert kinds["Score invariant"]["D"] == 0.0
    assert kinds["Score invariant"]["score_invariant"] == "yes"
    assert kinds["Spelling errors"]["score_invariant"] == "no"
    summary = _rows(report, "discernment_summary")
    # D_min is the spelling kind's D: the invariant kind's rightful 0 does not count
    assert summary["D_min"]["value"] == kinds["Spelling errors"]["D"] > 1
    assert summary["D_min"]["kinds"] == 1
    assert "Score-invariant kinds are left out" in _table(report, "discernment_summary").caption
    failures = _rows(report, "failure_rates")
    assert failures["Score invariant"]["measure"] == "success: score kept"
    assert failures["Score invariant"]["fbi_rate"] == 1.0
    assert failures["Spelling errors"]["measure"] == "failure: not scored lower"


def test_fbi_intervals_count_each_text_once(catalog):
    # three texts scored on two criteria: missed on both, on one, on none. The rate is the
    # mean of the texts' shares (1, 0.5, 0) = 0.5 with the Wilson interval over 3 texts,
    # wider than the one over 6 (text, criterion) pairs would be
    study, items, perts = study_with_items(3, ["fbi-spelling-errors"])
    run = strategy_run(study, template=BY_CRITERION)
    perturbed = [(5.0, 5.0), (5.0, 3.0), (3.0, 3.0)]
    for item, pert, scores in zip(items, perts["fbi-spelling-errors"], perturbed, strict=True):
        for criterion, value in zip((FLUENCY, COHERENCE), scores, strict=True):
            score(run, item, None, 5.0, criterion=criterion)
            score(run, item, pert, value, criterion=criterion)
    report = judge_reliability.build(run)
    row = _rows(report, "failure_rates")["Spelling errors"]
    low, high = wilson(1.5, 3)
    assert (row["fbi_rate"], row["n"], row["units"]) == (0.5, 3, 6)
    assert (row["ci_low"], row["ci_high"]) == (
        pytest.approx(low, abs=1e-4),
        pytest.approx(high, abs=1e-4),
    )
    assert (row["ci_low"], row["ci_high"]) == (0.1253, 0.8747)
    assert row["ci_high"] - row["ci_low"] > wilson(3, 6)[1] - wilson(3, 6)[0]
    ability = _rows(report, "failure_by_ability")["long-form writing"]
    assert (ability["fbi_rate"], ability["n"], ability["units"], ability["kinds"]) == (0.5, 3, 6, 1)
    assert (ability["ci_low"], ability["ci_high"]) == (0.1253, 0.8747)
    combined = _rows(report, "discernment")["Spelling errors"]
    assert (combined["n"], combined["M"]) == (3, 2)  # texts, and the two criteria combined
    p_values = [r for r in _table(report, "p_values").rows if r[0] == "Spelling errors"]
    assert len(p_values) == 2 and {r[2] for r in p_values} == {3}  # a row per criterion


def _set_abilities(items, abilities):
    for item, ability in zip(items, abilities, strict=True):
        item.metadata = {"ability": ability}
        item.save()


def test_score_invariant_results_per_ability(catalog):
    # the score-invariant kind has no ability of its own: each text takes its item's
    study, items, perts = study_with_items(4, ["fbi-entity-errors", "fbi-score-invariant"])
    _set_abilities(items, ["factual", "factual", "reasoning", "reasoning"])
    run = strategy_run(study)
    for k, item in enumerate(items):
        score(run, item, None, 5.0)
        score(run, item, perts["fbi-score-invariant"][k], 4.0 if k == 1 else 5.0)
        score(run, item, perts["fbi-entity-errors"][k], 5.0 if k == 0 else 2.0)
    report = judge_reliability.build(run)
    rows = _by_measure(report, "failure_by_ability")
    assert list(rows) == [
        ("factual", "failure: not scored lower"),
        ("factual", "success: score kept"),
        ("reasoning", "success: score kept"),
    ]
    missed = rows[("factual", "failure: not scored lower")]  # entity errors: 1 of 4 missed
    assert (missed["fbi_rate"], missed["n"], missed["kinds"]) == (0.25, 4, 1)
    assert (missed["ci_low"], missed["ci_high"]) == pytest.approx(wilson(1, 4), abs=1e-4)
    kept = rows[("factual", "success: score kept")]  # items 0 and 1: one kept
    assert (kept["fbi_rate"], kept["n"], kept["kinds"]) == (0.5, 2, 1)
    assert (kept["ci_low"], kept["ci_high"]) == pytest.approx(wilson(1, 2), abs=1e-4)
    assert rows[("reasoning", "success: score kept")]["fbi_rate"] == 1.0
    per_kind = _rows(report, "failure_rates")["Score invariant"]
    assert (per_kind["fbi_rate"], per_kind["ability"]) == (0.75, "factual, reasoning")


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
    assert abilities["long-form writing"]["fbi_rate"] == 0.5
    assert abilities["long-form writing"]["n"] == n
    assert abilities["factual"]["fbi_rate"] == pytest.approx(1 / 6, abs=1e-4)
    assert abilities["factual"]["measure"] == "failure: still the maximum score"
    for row in abilities.values():
        assert row["ci_low"] <= row["fbi_rate"] <= row["ci_high"]


def test_reference_guided_rates_need_no_original(catalog):
    # a reference-guided run that scored only perturbed texts (the original is the reference)
    study, _, perts = study_with_items(4, ["fbi-spelling-errors"])
    run = strategy_run(study, family="reference", template="Rate {{text}} against {{reference}}")
    for pert, value in zip(perts["fbi-spelling-errors"], (5.0, 5.0, 3.0, 2.0), strict=True):
        score(run, pert.item, pert, value)
    report = judge_reliability.build(run)
    row = _rows(report, "failure_rates")["Spelling errors"]
    assert (row["measure"], row["fbi_rate"], row["n"]) == (
        "failure: still the maximum score",
        0.5,
        4,
    )
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(wilson(2, 4), abs=1e-4)
    assert _rows(report, "failure_by_ability")["long-form writing"]["fbi_rate"] == 0.5


def test_pairwise_ties_are_successes_for_score_invariant_kinds(catalog):
    study, items, perts = study_with_items(4, ["fbi-spelling-errors", "fbi-score-invariant"])
    run = strategy_run(
        study, family="pairwise", template="{{text_a}} or {{text_b}}", both_orders=True
    )
    # (original first, swapped) per item
    invariant = [
        ("tie", "tie"),
        ("original", "perturbed"),
        ("original", "original"),
        ("tie", "original"),
    ]
    spelling = [("tie", "original")] + [("original", "original")] * 3
    for item, k in zip(items, range(4), strict=True):
        for slug, verdicts in (
            ("fbi-score-invariant", invariant),
            ("fbi-spelling-errors", spelling),
        ):
            for first, preferred in zip((True, False), verdicts[k], strict=True):
                prefer(run, item, perts[slug][k], first, preferred)
    report = judge_reliability.build(run)
    rows = _by_measure(report, "pairwise")
    # score-invariant: ties per judgement, texts' shares 1, 0, 0, 0.5 -> 0.375 over 4 texts
    tie = rows[("Score invariant", "success: tie (one order)")]
    assert (tie["fbi_rate"], tie["n"], tie["units"]) == (0.375, 4, 8)
    assert (tie["ci_low"], tie["ci_high"]) == pytest.approx(wilson(1.5, 4), abs=1e-4)
    # tie or either: (tie, tie), (original, perturbed), (tie, original) yes; (original,
    # original) no -> 3 of 4 pairs
    either = rows[("Score invariant", "success: tie or either (both orders)")]
    assert (either["fbi_rate"], either["n"], either["units"]) == (0.75, 4, 4)
    assert (either["ci_low"], either["ci_high"]) == pytest.approx(wilson(3, 4), abs=1e-4)
    # spelling errors: a tie is a miss; shares 0.5, 0, 0, 0 -> 0.125; one pair of 4 missed
    not_original = rows[("Spelling errors", "failure: not the original (one order)")]
    assert (not_original["fbi_rate"], not_original["n"], not_original["units"]) == (0.125, 4, 8)
    both = rows[("Spelling errors", "failure: original not chosen in both orders")]
    assert (both["fbi_rate"], both["n"]) == (0.25, 4)
    by_ability = _by_measure(report, "pairwise_by_ability")
    assert (
        by_ability[("long-form writing", "failure: original not chosen in both orders")]["fbi_rate"]
        == 0.25
    )
    assert (
        by_ability[("no ability given", "success: tie or either (both orders)")]["fbi_rate"] == 0.75
    )


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
    pairwise = _by_measure(report, "pairwise")
    assert {kind for kind, _ in pairwise} == {"Entity errors", "Spelling errors"}  # names
    one_order = "failure: not the original (one order)"
    both = "failure: original not chosen in both orders"
    assert pairwise[("Entity errors", one_order)]["fbi_rate"] == 0.75
    assert pairwise[("Entity errors", one_order)]["units"] == 2 * n
    assert pairwise[("Spelling errors", both)]["fbi_rate"] == 0.0
    by_ability = _by_measure(report, "pairwise_by_ability")
    factual = by_ability[("factual", both)]
    assert (factual["fbi_rate"], factual["n"]) == (0.75, n)
    assert factual["ci_low"] <= 0.75 <= factual["ci_high"] and not math.isnan(factual["ci_high"])


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
    row = _rows(report, "discernment")["Negation"]
    assert (row["n"], row["M"]) == (n, 1)
    assert row["p"] == pytest.approx(wilcoxon_p(orig, pert), rel=1e-2)
    assert row["D"] == pytest.approx(discernment(wilcoxon_p(orig, pert)), abs=1e-3)
    assert list(_rows(report, "deltas")) == ["Negation"]
    assert _rows(report, "deltas")["Negation"]["dimension"] == "overall"
    failures = _rows(report, "failure_rates")["Negation"]
    assert (failures["n"], failures["units"]) == (n, n)


def test_the_score_drop_is_original_minus_perturbed_and_says_so(catalog, client):
    # a scripted judge: every perturbed text scored below its original, drops 2, 3 and 1
    study, items, perts = study_with_items(3, ["negation"])
    run = strategy_run(study, template=BY_CRITERION)
    criterion = "discern-non-contradiction-default"
    for item, pert, value in zip(items, perts["negation"], (3.0, 2.0, 4.0), strict=True):
        score(run, item, None, 5.0, criterion=criterion)
        score(run, item, pert, value, criterion=criterion)
    report = judge_reliability.build(run)
    row = _rows(report, "deltas")["Negation"]
    assert row["delta"] == 2.0 and row["ci_low"] >= 1.0  # positive: the perturbed scored lower
    assert (row["dimension"], row["n"]) == ("Non-contradiction (default)", 3)
    assert row["cell"] == "neither: no agreed verdict"  # no people's verdict: words, not a code
    heatmap = next(f for s in report.sections for f in s.figures if f.name == "deltas")
    assert heatmap.title.startswith("Score drop (original − perturbed)")
    assert "Score drop (original − perturbed)" in heatmap.caption
    assert "every cell over 3 items" in heatmap.caption
    client.force_login(study.owner)
    page = client.get(f"/studies/{study.pk}/reports/judge-reliability/", {"run": run.pk})
    html = page.content.decode()
    assert "<th>Score drop (original − perturbed) [95% interval]</th>" in html
    assert "perturbed − original" not in html


def test_aspect_correlations_carry_n_and_a_fisher_interval(catalog):
    study, items, _ = study_with_items(5, ["negation"])
    run = strategy_run(study, template=BY_CRITERION)
    for item, fluency, coherence in zip(items, (1, 2, 3, 4, 5), (2, 1, 4, 3, 5), strict=True):
        score(run, item, None, float(fluency), criterion=FLUENCY)
        score(run, item, None, float(coherence), criterion=COHERENCE)
    report = judge_reliability.build(run)
    table = _table(report, "correlation_judge_default")
    assert table.columns == ["aspect", "other_aspect", "aspect_r", "ci_low", "ci_high", "n_texts"]
    # r = 0.8 over 5 texts; Fisher: tanh(atanh(0.8) ± 1.96 / sqrt(5 - 3))
    half = Z / math.sqrt(2)
    low, high = math.tanh(math.atanh(0.8) - half), math.tanh(math.atanh(0.8) + half)
    assert table.rows == [
        [
            "coherence",
            "fluency",
            0.8,
            pytest.approx(low, abs=1e-4),
            pytest.approx(high, abs=1e-4),
            5,
        ]
    ]
    assert (round(low, 4), round(high, 4)) == (-0.2796, 0.9862)


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
    assert _rows(report, "deltas")["Negation"]["n"] == 3  # the paraphrase item is left out
