"""Sentiment polarity of judge justifications, with TextBlob (offline: its lexicon ships in
the wheel), per strategy, criterion and text, and misleading cue vs knowledge prompt."""

import pytest
from textblob import TextBlob

from apps.analysis.reports import judge_vs_human
from apps.analysis.stats.sentiment import mean_polarity, polarity
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


def test_mean_polarity_skips_empty_replies():
    result = mean_polarity([*SENTENCES, " "])
    assert result.n == 3
    assert result.mean == pytest.approx((0.565 - 0.6 + 0.0) / 3)
    assert mean_polarity([]).n == 0


def test_the_interval_contains_the_mean_and_narrows_as_n_grows():
    good, bad, flat = SENTENCES
    widths = []
    for n in (5, 50, 500):
        m = mean_polarity([good, bad, flat] * n)
        assert m.n == 3 * n and m.ci_low <= m.mean <= m.ci_high
        widths.append(m.ci_high - m.ci_low)
    assert widths[0] > widths[1] > widths[2] > 0
    single = mean_polarity([good])
    assert single.n == 1 and single.ci_low != single.ci_low  # NaN: no interval from one reply


def _llm_run(study, judge, slug):
    strategy = Strategy.objects.filter(slug=slug).latest("version")
    return JudgeRun.objects.create(judge=judge, strategy=strategy, study=study, status="done")


def _reply(run, item, perturbation, text):
    metric = Metric.objects.get(task__slug="summarization", slug="consistency")
    JudgeCall.objects.create(
        run=run,
        identity=call_identity(
            item_id=item.pk,
            perturbation_id=perturbation.pk if perturbation else None,
            criterion_id=None,
            metric_id=metric.pk,
            sample_index=0,
            original_first=None,
        ),
        item=item,
        perturbation=perturbation,
        metric=metric,
        request={},
        raw_response=text,
        parse_status="parsed",
        score=3,
    )


@pytest.mark.django_db
def test_the_judge_report_shows_polarity_per_strategy_text_and_cue(catalog, client):
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
    report = judge_vs_human.build(study)
    tables = {t.name: t for t in report.tables()}
    rows = {(r[1], r[3]): r[4:] for r in tables["sentiment"].rows}
    assert rows == {
        ("cd-knowledge", "unperturbed"): [0.565, 0.565, 0.565, 2],
        ("cd-knowledge", "perturbed"): [-0.6, -0.6, -0.6, 2],
        ("cd-misleading-cue", "unperturbed"): [0.0, 0.0, 0.0, 2],
    }
    assert tables["sentiment_misleading"].rows == [
        ["llm", "consistency", 0.565, 0.565, 0.565, 2, 0.0, 0.0, 0.0, 2, -0.565]
    ]
    client.force_login(study.owner)
    page = client.get(f"/studies/{study.pk}/reports/judge-vs-human/").content.decode()
    assert "Sentiment of justifications" in page and 'data-table="sentiment"' in page
