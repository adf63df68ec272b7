"""Reports computed from stored judgements, checked against hand-computed cases (docs/methods.md)."""

import math

import numpy as np
import pytest

from apps.analysis.reports import expert_weights, human_agreement, judge_reliability
from apps.analysis.reports.base import Report
from apps.analysis.stats.discernment import discernment, hmp_pvalue
from tests.analysis.builders import (
    annotators,
    compare,
    judge_run,
    score,
    study_with_items,
    vet,
    vote,
)

pytestmark = pytest.mark.django_db
MINOR = "Random character deletion (minor)"


def _table(report: Report, name: str) -> dict:
    table = next(t for t in report.tables() if t.name == name)
    return {"columns": table.columns, "rows": table.rows}


def _row(report, table, first):
    found = _table(report, table)
    return dict(zip(found["columns"], next(r for r in found["rows"] if r[0] == first), strict=True))


def _row_by(report, table, column, value):
    found = _table(report, table)
    row = next(r for r in found["rows"] if r[column] == value)
    return dict(zip(found["columns"], row, strict=True))


def test_human_agreement_consistency_match_rate_and_kappa(catalog):
    study, _, perts = study_with_items(3, ["negation"])
    people = annotators(4)
    negation = perts["negation"][0]
    # {A, A, C, D} on the targeted aspect -> consistency 2/4 = 0.5 (methods §2)
    for person, outcome in zip(people, ["worse", "worse", "same", "uncertain"], strict=True):
        compare(study, negation, "discern-non-contradiction-default", person, outcome)
    # all "same" on fluency -> consistency 1.0
    for person in people:
        compare(study, negation, "discern-fluency-default", person, "same")
    # two vetters: agree on 2 of 3. Cohen's kappa by hand: po = 2/3,
    # pe = (2/3)(1/3) + (1/3)(2/3) = 4/9, kappa = (2/3 - 4/9) / (1 - 4/9) = 0.4
    for pert, (a, b) in zip(
        perts["negation"],
        [("valid", "valid"), ("valid", "invalid"), ("invalid", "invalid")],
        strict=True,
    ):
        vet(study, pert, people[0], a)
        vet(study, pert, people[1], b)
    report = human_agreement.build(study)
    consistency = _row(report, "consistency", 2)
    assert consistency["mean_consistency"] == 0.75 and consistency["annotations"] == 8
    default = _row(report, "match_rates", "default")
    # (negation, non-contradiction): 2 worse vs 1 same -> affected = expected; (negation,
    # fluency): not affected = expected -> 2 of 2 cells match, by both voting rules
    assert (default["cells"], default["matched_vote_all"], default["match_rate_vote_all"]) == (
        2,
        2,
        1.0,
    )
    assert default["match_rate_vote_vote"] == 1.0
    # Wilson 95% interval of 2 of 2 cells: [0.3424, 1]
    assert (default["vote_all_ci_low"], default["vote_all_ci_high"]) == (0.3424, 1.0)
    vetting = _row(report, "agreement", "vetting verdicts")
    assert vetting["cohen_kappa"] == pytest.approx(0.4)
    assert vetting["percent_agreement"] == pytest.approx(2 / 3, abs=1e-4)
    assert (vetting["n_units"], vetting["n_raters"]) == (3, 2)
    assert vetting["ci_low"] <= vetting["human_alpha"] <= vetting["ci_high"]
    assert vetting["kappa_ci_low"] <= 0.4 <= vetting["kappa_ci_high"]
    assert vetting["percent_ci_low"] <= 2 / 3 <= vetting["percent_ci_high"]
    by_kind = _row(report, "vetting_by_kind", "Negation")  # the kind by name
    assert (by_kind["valid"], by_kind["invalid"], by_kind["valid_share"]) == (3, 3, 0.5)
    assert (by_kind["total"], by_kind["texts"]) == (6, 3)
    # 6 verdicts on 3 texts: the interval counts each text once, Wilson of 1.5 of 3:
    # p = 0.5, z = 1.96, centre 0.5, half = z sqrt(p q / 3 + z^2 / 36) / (1 + z^2 / 3)
    # = 1.96 x sqrt(0.08333 + 0.10671) / 2.28053 = 0.37469 -> [0.1253, 0.8747]
    assert (by_kind["ci_low"], by_kind["ci_high"]) == (0.1253, 0.8747)
    # two pairs, consistency 0.5 and 1.0, both on one perturbed text: the interval
    # resamples texts (a text's pairs are not independent), and one text gives none
    assert (consistency["texts"], consistency["ci_low"], consistency["ci_high"]) == (1, None, None)


def test_expert_weights_are_vote_shares(catalog):
    study, _, _ = study_with_items(1, ["negation"])
    experts = annotators(10, "expert")
    for person, metric in zip(
        experts, ["coherence"] * 4 + ["fluency"] + ["consistency"] * 5, strict=True
    ):
        vote(study, "negation", metric, person)
    report = expert_weights.build(study)
    weights = {row[2]: row[4] for row in _table(report, "expert_weights")["rows"]}
    # shown by name (kind "Negation", metric "Coherence"), not by slug
    assert weights == {"Coherence": 0.4, "Consistency": 0.5, "Fluency": 0.1, "Relevance": 0.0}
    coherence = _row_by(report, "expert_weights", 2, "Coherence")
    assert coherence["kind"] == "Negation"
    assert coherence["experts"] == 10
    assert coherence["ci_low"] < 0.4 < coherence["ci_high"]


def test_discernment_deltas_and_failure_rates(catalog):
    n = 12
    study, items, perts = study_with_items(n, ["char-deletion-minor", "sentence-exchange"])
    run = judge_run(study)
    for k, item in enumerate(items):
        for metric in ("coherence", "consistency"):
            original = 4.0 + 0.01 * k
            score(run, item, None, original, metric=metric)
            # a drop on every item, all different: exact one-sided p = 2^-12
            score(
                run, item, perts["char-deletion-minor"][k], original - 1 - 0.01 * k, metric=metric
            )
            score(run, item, perts["sentence-exchange"][k], original, metric=metric)  # unmoved
    experts = annotators(4, "expert")
    for person, metric in zip(
        experts, ["coherence", "consistency", "consistency", "consistency"], strict=True
    ):
        vote(study, "char-deletion-minor", metric, person)
    report = judge_reliability.build(run)
    p = 2.0**-12
    p_values = {(r[0], r[1]): r[3] for r in _table(report, "p_values")["rows"]}
    assert p_values[(MINOR, "Coherence")] == pytest.approx(p, rel=1e-3)  # one row per metric
    dropped = _row(report, "discernment", MINOR)
    # default: Wilson's HMP of (p, p) is p, made exact by the Landau tail at 1/p, M = 2
    assert dropped["p"] == pytest.approx(hmp_pvalue([p, p]), rel=1e-2)
    assert dropped["D"] == pytest.approx(discernment(hmp_pvalue([p, p])), abs=1e-3)
    assert (dropped["n"], dropped["M"]) == (n, 2)
    # as published: p_i = 1 / (1/p + 1/p) = p/2; D = ln(p/2) / ln(0.05) = 3.0079
    dropped |= _row(report, "discernment_published", MINOR)
    assert dropped["p_published"] == pytest.approx(p / 2, rel=1e-2)
    assert dropped["D_published"] == pytest.approx(math.log(p / 2) / math.log(0.05), abs=1e-3)
    # EW .25/.75: 1 / (.25/p + .75/p) = p -> D_EW (published) = ln(p) / ln(0.05) = 2.7765
    assert dropped["D_EW_published"] == pytest.approx(math.log(p) / math.log(0.05), abs=1e-3)
    weighted = hmp_pvalue([p, p], [0.25, 0.75])
    assert dropped["D_EW"] == pytest.approx(discernment(weighted), abs=1e-3)
    unmoved = _row(report, "discernment", "Sentence exchange")
    # both metrics p = 1 (no change): the default says no evidence, D = 0; the published
    # 1 / (1/1 + 1/1) = 0.5 gives D = 0.2314 > 0 although nothing moved
    assert (unmoved["p"], unmoved["D"], unmoved["D_EW"]) == (1.0, 0.0, None)
    unmoved |= _row(report, "discernment_published", "Sentence exchange")
    assert unmoved["p_published"] == 0.5
    assert unmoved["D_published"] == pytest.approx(math.log(0.5) / math.log(0.05), abs=1e-3)
    summary = {row[0]: row[1:] for row in _table(report, "discernment_summary")["rows"]}
    # levels C and S get half the weight each: D_avg = 0.5 * D(dropped) + 0.5 * D(unmoved)
    assert summary["D_min"] == [0.0, unmoved["D_published"], 2]
    assert summary["D_avg"][0] == pytest.approx(dropped["D"] / 2, abs=1e-3)
    assert summary["D_avg"][1] == pytest.approx(
        (dropped["D_published"] + unmoved["D_published"]) / 2, abs=1e-3
    )
    # D^EW: only the kind the experts voted on has it
    assert summary["D_EW_min"] == [dropped["D_EW"], dropped["D_EW_published"], 1]
    deltas = {(r[0], r[1]): r[4] for r in _table(report, "deltas")["rows"]}
    expected_delta = float(np.mean([1 + 0.01 * k for k in range(n)]))
    assert deltas[(MINOR, "Coherence")] == pytest.approx(expected_delta)
    assert deltas[("Sentence exchange", "Coherence")] == 0.0
    failures = {r[0]: r[3:] for r in _table(report, "failure_rates")["rows"]}
    assert failures[MINOR][0] == 0.0 and failures["Sentence exchange"][0] == 1.0
    # two metrics of 12 texts each: each text counts once, the Wilson 95% interval of 0 of
    # 12 texts is [0, 0.2425] (of 0 of 24 (text, metric) pairs it would be [0, 0.1380])
    assert failures[MINOR][1:] == [0.0, pytest.approx(0.2425, abs=1e-4), n, 2 * n]
    assert [f.name for s in report.sections for f in s.figures][:1] == ["deltas"]


def test_unparsed_calls_never_become_scores(catalog):
    study, items, perts = study_with_items(3, ["negation"])
    run = judge_run(study)
    for item, pert in zip(items, perts["negation"], strict=True):
        score(run, item, None, 5.0, metric="coherence")
        score(run, item, pert, None, metric="coherence")  # unparsed: no score
    report = judge_reliability.build(run)
    counts = _table(report, "score_counts")["rows"]
    assert counts == [[5.0, 3, 0]]
    assert not any(t.name == "deltas" for t in report.tables())


def test_s_t_and_s_f_cells_follow_expectation_and_humans(catalog):
    study, items, perts = study_with_items(4, ["negation"])
    run = judge_run(study)
    people = annotators(3)
    for item, pert in zip(items, perts["negation"], strict=True):
        for key, drop in (
            ("discern-non-contradiction-default", 2.0),
            ("discern-fluency-default", 0.0),
        ):
            score(run, item, None, 5.0, criterion=key)
            score(run, item, pert, 5.0 - drop, criterion=key)
        for person in people:
            compare(study, pert, "discern-non-contradiction-default", person, "worse")
            compare(study, pert, "discern-fluency-default", person, "same")
    report = judge_reliability.build(run)
    cells = {(r[0], r[2]): (r[4], r[8]) for r in _table(report, "deltas")["rows"]}
    s_t, s_f = "S_T: affected, the score should drop", "S_F: not affected, the score should stay"
    assert cells[("Negation", "non-contradiction")] == (2.0, s_t)
    assert cells[("Negation", "fluency")] == (0.0, s_f)
    means = {r[0]: r for r in _table(report, "s_t_s_f_means")["rows"]}
    # every item dropped 2 on the S_T cell, 0 on the S_F cell: intervals collapse on them
    assert means[s_t] == [s_t, "default", 2.0, 2.0, 2.0, 1, 4]
    assert means[s_f] == [s_f, "default", 0.0, 0.0, 0.0, 1, 4]


def test_progress_page_shows_each_annotators_agreement(client, catalog):
    from apps.analysis.annotation_agreement import annotator_agreement

    study, _, perts = study_with_items(2, ["negation"])
    a, b, c = annotators(3)
    for pert in perts["negation"]:
        vet(study, pert, a, "valid")
        vet(study, pert, b, "valid")
        vet(study, pert, c, "invalid")
    figures = annotator_agreement(study.pk)
    assert figures == {a.pk: "1.00 (n=2)", b.pk: "1.00 (n=2)", c.pk: "0.00 (n=2)"}
    from apps.annotation.models import StudyMembership

    for person in (a, b, c):
        StudyMembership.objects.create(study=study, user=person, role="annotator")
    client.force_login(study.owner)
    page = client.get(f"/studies/{study.pk}/progress/").content.decode()
    assert "0.00 (n=2)" in page and page.count("1.00 (n=2)") == 2


def test_cell_verdicts_carry_votes_n_and_an_interval_in_words(catalog):
    """Two negation texts compared by three people on non-contradiction and fluency.
    Non-contradiction: text 1 worse, worse, same; text 2 worse, uncertain, worse -> 4 votes
    affected, 1 not, 1 abstains: 6 annotations on 2 texts, share 4/5 = 0.8, verdict
    affected. Its interval counts each text once: Wilson of 0.8 x 2 = 1.6 of 2,
    d = 1 + z^2/2 = 2.92074, centre (0.8 + z^2/4) / d = 0.60271,
    half = z sqrt(0.16/2 + z^2/16) / d = 0.37966 -> [0.2231, 0.9824].
    Fluency: all 'same' -> share 0, verdict not affected."""
    study, _, perts = study_with_items(2, ["negation"])
    people = annotators(3)
    answers = [["worse", "worse", "same"], ["worse", "uncertain", "worse"]]
    for pert, outcomes in zip(perts["negation"], answers, strict=True):
        for person, outcome in zip(people, outcomes, strict=True):
            compare(study, pert, "discern-non-contradiction-default", person, outcome)
            compare(study, pert, "discern-fluency-default", person, "same")
    report = human_agreement.build(study)
    cells = {
        r[1]: dict(zip(_table(report, "cell_verdicts")["columns"], r, strict=True))
        for r in _table(report, "cell_verdicts")["rows"]
    }
    hit = cells["Non-contradiction"]  # kinds and aspects by name, verdicts in words
    assert (hit["kind"], hit["human_verdict_vote_all"], hit["expected"]) == (
        "Negation",
        "affected",
        "affected",
    )
    assert (hit["affected_share"], hit["annotations"], hit["texts"]) == (0.8, 6, 2)
    assert (hit["ci_low"], hit["ci_high"]) == (0.2231, 0.9824)
    flat = cells["Fluency"]
    assert (flat["human_verdict_vote_all"], flat["expected"], flat["affected_share"]) == (
        "not affected",
        "not affected",
        0.0,
    )
    default = _row(report, "match_rates", "default")
    assert (default["cells"], default["annotations"], default["matched_vote_all"]) == (2, 12, 2)
    (figure,) = [f for s in report.sections for f in s.figures if f.name == "cell_verdicts"]
    assert "every cell rests on 6 annotations" in figure.caption
    consistency = _row(report, "consistency", 4)  # 2 texts x 2 criteria = 4 pairs
    # pairs: 2/3, 2/3 (uncertain in the denominator), 1, 1 -> mean 0.8333 over 2 texts
    assert (consistency["texts"], consistency["mean_consistency"]) == (2, 0.8333)
    assert consistency["ci_low"] <= 0.8333 <= consistency["ci_high"]


def test_every_table_of_the_human_reports_says_what_n_counts_and_shows_words(catalog):
    """Every table of human-agreement and expert-weights, and the human tables of
    judge-vs-human, has a caption naming its N; every column holding a figure (a
    non-integer number) has a definition; no value shown is a machine word."""
    from apps.analysis.definitions import DEFINITIONS
    from apps.analysis.reports import judge_vs_human
    from tests.analysis.builders import rate

    study, items, perts = study_with_items(4, ["negation"])
    people = annotators(2)
    for n, (item, pert) in enumerate(zip(items, perts["negation"], strict=True)):
        vet(study, pert, people[0], "valid")
        vet(study, pert, people[1], "not-relevant" if n else "valid")
        compare(study, pert, "discern-fluency-default", people[0], "same")
        compare(study, pert, "discern-fluency-default", people[1], "worse" if n else "same")
        rate(item, None, "coherence", "r1", float(n + 1))
        rate(item, None, "coherence", "r2", float(min(n + 2, 5)))
    experts = annotators(3, "expert")
    for person, metric in zip(experts, ["coherence", "coherence", "fluency"], strict=True):
        vote(study, "negation", metric, person)
    run = judge_run(study)
    for n, item in enumerate(items):
        score(run, item, None, float(n + 1), criterion="discern-coherence-default")
    mine = {
        "agreement", "vetting_by_kind", "consistency", "match_rates", "cell_verdicts",
        "imported_agreement", "rater_checks", "expert_weights", "expert_agreement",
        "judge_human_alpha", "human_alpha", f"judge_human_pearson_run{run.pk}",
    }  # fmt: skip
    tables = [
        t
        for report in (
            human_agreement.build(study),
            judge_vs_human.build(study),
            expert_weights.build(study),
        )
        for t in report.tables()
        if t.name in mine
    ]
    assert {t.name for t in tables} == mine
    for table in tables:
        assert "N:" in table.caption, table.name
        for i, column in enumerate(table.columns):
            values = [row[i] for row in table.rows]
            figure = any(isinstance(v, float) and not v.is_integer() for v in values)
            if figure and not column.endswith(("ci_low", "ci_high")):
                assert column in DEFINITIONS, (table.name, column)
            for value in values:
                assert not (isinstance(value, str) and "_" in value), (table.name, value)
                assert not isinstance(value, bool), (table.name, column)
