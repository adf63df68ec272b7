"""Sentiment polarity of judge justifications, with TextBlob (offline: its lexicon ships in
the wheel), per strategy, criterion and text, and misleading cue vs knowledge prompt."""

import math

import pytest
from textblob import TextBlob

from apps.analysis.reports import judge_vs_human
from apps.analysis.stats.sentiment import polarity, polarity_estimate, polarity_shift
from apps.catalog.models import Metric
from apps.judging.loading import judging_load
from apps.judging.models import JudgeCall, JudgeRun, Strategy
from apps.judging.models.call import call_identity
from tests.analysis.builders import study_with_items
from tests.factories import llm_judge_create

SENTENCES = {
    "The summary is excellent and very clear.": 0.565,
    "This answer is terrible, wrong and confusing.": -0.6,
    "The response addresses the question.": 0.0,
}


@pytest.mark.parametrize(("sentence", "expected"), SENTENCES.items())
def test_polarity_is_textblobs_own(sentence, expected):
    assert polarity(sentence) == TextBlob(sentence).sentiment.polarity
    assert polarity(sentence) == pytest.approx(expected)


def test_polarity_estimate_skips_empty_replies_and_counts_each_text_once():
    good, bad, flat = SENTENCES
    result = polarity_estimate({"a": [good, " "], "b": [bad], "c": [flat]})
    assert (result.n, result.clusters) == (3, 3)
    assert result.value == pytest.approx((0.565 - 0.6 + 0.0) / 3)
    # two replies to text a (two criteria): 4 replies, still 3 texts behind the interval
    twice = polarity_estimate({"a": [good, good], "b": [bad], "c": [flat]})
    assert (twice.n, twice.clusters) == (4, 3)
    assert twice.value == pytest.approx((2 * 0.565 - 0.6) / 4)
    assert polarity_estimate({}).n == 0


def test_the_interval_contains_the_mean_and_narrows_as_texts_grow():
    good, bad, flat = SENTENCES
    widths = []
    for n in (5, 50, 500):
        m = polarity_estimate({k: [(good, bad, flat)[k % 3]] for k in range(3 * n)})
        assert m.clusters == 3 * n and m.ci_low <= m.value <= m.ci_high
        widths.append(m.ci_high - m.ci_low)
    assert widths[0] > widths[1] > widths[2] > 0
    single = polarity_estimate({"a": [good]})
    assert single.n == 1 and math.isnan(single.ci_low)  # no interval from one text
    # copying every reply onto the same texts does not narrow the interval
    copied = polarity_estimate({k: [(good, bad, flat)[k % 3]] * 4 for k in range(15)})
    once = polarity_estimate({k: [(good, bad, flat)[k % 3]] for k in range(15)})
    assert copied.ci_high - copied.ci_low == pytest.approx(once.ci_high - once.ci_low)


def test_polarity_shift_pairs_texts_by_hand():
    good, bad, flat = SENTENCES
    with_cue = {"t1": [bad], "t2": [flat, flat], "t3": [good]}
    without = {"t1": [good], "t2": [good, " "], "t4": [bad]}
    # t1: -0.6 - 0.565 = -1.165; t2: 0 - 0.565 = -0.565; t3 and t4 have no partner
    shift = polarity_shift(with_cue, without)
    assert shift.n == 2 and shift.value == pytest.approx((-1.165 - 0.565) / 2)
    assert shift.ci_low <= shift.value <= shift.ci_high


def _llm_run(study, judge, slug):
    strategy = Strategy.objects.filter(slug=slug).latest("version")
    return JudgeRun.objects.create(judge=judge, strategy=strategy, study=study, status="done")


def _reply(run, item, perturbation, text, *, sample=0, parsed=True):
    metric = Metric.objects.get(task__slug="summarization", slug="consistency")
    JudgeCall.objects.create(
        run=run,
        identity=call_identity(
            item_id=item.pk,
            perturbation_id=perturbation.pk if perturbation else None,
            criterion_id=None,
            metric_id=metric.pk,
            sample_index=sample,
            original_first=None,
        ),
        item=item,
        perturbation=perturbation,
        metric=metric,
        sample_index=sample,
        request={},
        raw_response=text,
        parse_status="parsed" if parsed else "unparsed",
        score=3 if parsed else None,
    )


def _tables(study):
    return {t.name: t for t in judge_vs_human.build(study).tables()}


@pytest.mark.django_db
def test_the_judge_report_shows_polarity_per_run_text_and_cue(catalog, client):
    judging_load()
    study, items, perts = study_with_items(2, ["negation"])
    judge = llm_judge_create(name="llm", base_url="http://127.0.0.1:1/v1", model="m")
    knowledge = _llm_run(study, judge, "cd-knowledge")
    cue = _llm_run(study, judge, "cd-misleading-cue")
    good, bad, flat = SENTENCES
    for item, pert in zip(items, perts["negation"], strict=True):
        _reply(knowledge, item, None, good)
        _reply(knowledge, item, pert, bad)
        _reply(cue, item, None, flat)
    tables = _tables(study)
    rows = {(r[1], r[4]): r[5:] for r in tables["sentiment"].rows}
    named = "Knowledge prompt (metric definition)"  # the strategy's name, not its slug
    assert rows == {
        (named, "unperturbed"): [0.565, 0.565, 0.565, 2, 2],
        (named, "perturbed"): [-0.6, -0.6, -0.6, 2, 2],
        ("Misleading cue (perturbed prompt)", "unperturbed"): [0.0, 0.0, 0.0, 2, 2],
    }
    # cue minus knowledge per text: 0 - 0.565 on both texts
    assert tables["sentiment_misleading"].rows == [
        ["llm", "consistency", knowledge.pk, cue.pk, -0.565, -0.565, -0.565, 2]
    ]
    client.force_login(study.owner)
    page = client.get(f"/studies/{study.pk}/reports/judge-vs-human/").content.decode()
    assert "Sentiment of justifications" in page and 'data-table="sentiment"' in page


@pytest.mark.django_db
def test_the_cue_is_paired_with_the_latest_knowledge_run_and_unparsed_replies_are_not_read(
    catalog,
):
    judging_load()
    study, items, _ = study_with_items(2, ["negation"])
    judge = llm_judge_create(name="llm", base_url="http://127.0.0.1:1/v1", model="m")
    older = _llm_run(study, judge, "cd-knowledge")
    latest = _llm_run(study, judge, "cd-knowledge")
    cue = _llm_run(study, judge, "cd-misleading-cue")
    good, bad, flat = SENTENCES
    for item in items:
        _reply(older, item, None, bad)
        _reply(latest, item, None, good)
        # an error page kept raw: its words are negative, but it is no justification
        _reply(
            latest,
            item,
            None,
            "Error: the server is down, awful bad failure",
            sample=1,
            parsed=False,
        )
        _reply(cue, item, None, flat)
    tables = _tables(study)
    # one row: the latest knowledge run (0 - 0.565), not one per knowledge run of the judge
    assert tables["sentiment_misleading"].rows == [
        ["llm", "consistency", latest.pk, cue.pk, -0.565, -0.565, -0.565, 2]
    ]
    by_run = {r[2]: r[5:] for r in tables["sentiment"].rows}
    assert by_run[latest.pk] == [0.565, 0.565, 0.565, 2, 2]  # the unparsed replies left out
    assert by_run[older.pk] == [-0.6, -0.6, -0.6, 2, 2]
    # the misleading-cue match share compares with the same run
    match = tables["misleading_match"].rows
    assert {row[2] for row in match} == {latest.pk}
