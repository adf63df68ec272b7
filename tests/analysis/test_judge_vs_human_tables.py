"""The judge-vs-human report rebuilds Hu et al. Tables 1/5 and Fig. 8 (Pearson per description
type, correlation between description types) and Chaudhary et al. Tables 2-3 (consistency
across the four prompting techniques, misleading-cue match share per criterion)."""

import pytest

from apps.analysis.models import HumanRating
from apps.analysis.reports import judge_vs_human
from apps.catalog.models import Aspect
from apps.judging.models import Strategy
from tests.analysis.builders import judge_run, score, study_with_items

pytestmark = pytest.mark.django_db


def _table(report, name):
    table = next(t for t in report.tables() if t.name == name)
    return [dict(zip(table.columns, row, strict=True)) for row in table.rows]


def _technique_run(study, judge, technique: str):
    strategy = Strategy.objects.create(
        slug=f"t-{technique}",
        name=technique,
        family="prompting",
        technique=technique,
        prompt_template="Rate {{text}} on {{quality}}",
        parser="score_only",
    )
    run = judge_run(study, strategy=strategy)
    run.judge = judge
    run.save()
    return run


def test_pearson_per_description_type_and_between_types(catalog):
    study, items, _ = study_with_items(6, [])
    coherence = Aspect.objects.get(slug="coherence")
    human = [1.0, 2.0, 2.0, 3.0, 4.0, 5.0]
    for item, value in zip(items, human, strict=True):
        for rater, shift in (("r1", 0.0), ("r2", 1.0)):  # mean = value + 0.5
            HumanRating.objects.create(
                item=item,
                criterion_name="Coherence",
                aspect=coherence,
                rater=rater,
                score=value + shift,
                scale_min=1,
                scale_max=6,
            )
    run = judge_run(study)
    for item, value in zip(items, human, strict=True):
        score(run, item, None, value, criterion="discern-coherence-default")  # follows humans
        score(run, item, None, 6.0 - value, criterion="discern-coherence-simplified")  # reversed
    report = judge_vs_human.build(study)
    rows = {r["description_type"]: r for r in _table(report, f"judge_human_pearson_run{run.pk}")}
    assert rows["default"]["judge_human_r"] == pytest.approx(1.0) and rows["default"]["n"] == 6
    assert rows["simplified"]["judge_human_r"] == pytest.approx(-1.0)
    low, high = rows["default"]["ci_low"], rows["default"]["ci_high"]
    assert low <= rows["default"]["judge_human_r"] <= high
    (between,) = _table(report, f"description_type_correlation_run{run.pk}")
    assert (between["description_type"], between["other_type"]) == ("default", "simplified")
    # r = -1 exactly: Fisher's interval tanh(atanh(-1) ± ...) collapses on -1; N = 6 texts
    assert between["r_between_types"] == pytest.approx(-1.0) and between["n"] == 6
    assert between["ci_low"] == pytest.approx(-1.0) and between["ci_high"] == pytest.approx(-1.0)


def test_consistency_by_technique_and_misleading_cue_per_criterion(catalog):
    study, items, _ = study_with_items(8, [])
    first = judge_run(study)
    judge = first.judge
    runs = {
        t: _technique_run(study, judge, t)
        for t in ("zero-shot", "knowledge", "few-shot", "chain-of-thought", "misleading-cue")
    }
    other_judge_knowledge = judge_run(study)  # another judge's knowledge run must not pair
    base = [1.0, 2.0, 3.0, 4.0, 5.0, 1.0, 2.0, 3.0]
    for k, item in enumerate(items):
        for technique, run in runs.items():
            for metric in ("coherence", "fluency"):
                value = base[k]
                if technique == "misleading-cue":
                    # coherence: matches knowledge on 6 of 8; fluency: on 2 of 8
                    keep = k < 6 if metric == "coherence" else k < 2
                    value = value if keep else 6.0 - value + (value == 3.0)
                score(run, item, None, value, metric=metric)
        score(other_judge_knowledge, item, None, 3.0, metric="coherence")
    report = judge_vs_human.build(study)
    alpha = {r["criterion"]: r for r in _table(report, "strategy_alpha")}
    assert set(alpha) == {"coherence", "fluency"}  # one row per criterion, not per judge pool
    assert alpha["coherence"]["techniques"] == (
        "Zero-shot, Knowledge (definitions given), Few-shot, Chain of thought"
    )
    assert alpha["coherence"]["alpha"] == 1.0 and alpha["coherence"]["n"] == 8
    match = {r["criterion"]: r for r in _table(report, "misleading_match")}
    assert match["coherence"]["cue_resisted"] == 0.75 and match["coherence"]["n"] == 8
    assert match["fluency"]["cue_resisted"] == 0.25
    # pooled, each text counts once: texts' shares 1, 1, .5 x 4, 0, 0 -> 0.5 over 8 texts,
    # the Wilson interval of 4 of 8 (not of 8 of 16 text x criterion pairs)
    pooled = match["all criteria"]
    assert (pooled["cue_resisted"], pooled["n"]) == (0.5, 8)
    assert (pooled["ci_low"], pooled["ci_high"]) == (0.2152, 0.7848)
    assert {r["knowledge_run"] for r in match.values()} == {runs["knowledge"].pk}
    for row in match.values():
        assert row["ci_low"] <= row["cue_resisted"] <= row["ci_high"]


def test_human_aspect_correlations_carry_n_and_a_fisher_interval():
    """People's mean ratings of five texts on coherence and fluency (r = 0.8 by hand, see
    tests/analysis/stats/test_agreement.py: Fisher [-0.2796, 0.9862]) and of three of them
    on relevance. One row per pair of aspects, N per pair; the heatmap writes N per cell."""
    from apps.analysis.reports.human_scores import (
        aspect_correlation_figure,
        aspect_correlation_table,
    )

    coherence, fluency = [1, 2, 3, 4, 5], [2, 1, 4, 3, 5]
    texts = {
        (n, None): {"coherence": float(c), "fluency": float(f)}
        for n, (c, f) in enumerate(zip(coherence, fluency, strict=True))
    }
    for n, value in ((1, 1.0), (2, 2.0), (4, 3.0)):
        texts[(n, None)]["relevance"] = value
    aspects = ["coherence", "fluency", "relevance"]
    table = aspect_correlation_table("human", texts, aspects, "the people's mean ratings")
    rows = {(r[0], r[1]): dict(zip(table.columns, r, strict=True)) for r in table.rows}
    pair = rows[("coherence", "fluency")]
    assert (pair["aspect_r"], pair["ci_low"], pair["ci_high"], pair["n_texts"]) == (
        0.8,
        -0.2796,
        0.9862,
        5,
    )
    assert rows[("coherence", "relevance")]["n_texts"] == 3  # texts 1, 2, 4
    assert rows[("coherence", "relevance")]["ci_low"] is None  # no interval below 4 texts
    assert "N: those texts" in table.caption
    figure = aspect_correlation_figure("human", "People", texts, aspects, "people")
    assert figure.png_base64 and "N: those texts" in figure.caption
