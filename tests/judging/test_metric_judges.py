"""Metric judges (BLEU, chrF, ROUGE-L) against the original: offline, through the run."""

import pytest

from apps.judging.metric_judges import metric_score
from apps.judging.models import Judge
from tests.judging.conftest import new_run, work

ORIGINAL = "The council voted to close the library in March because visits fell."
PERTURBED = "The council voted not to close the library in March because visits fell."


@pytest.mark.parametrize("metric", ["bleu", "chrf", "rougeL"])
def test_the_original_gets_the_maximum_and_a_perturbation_less(metric):
    assert metric_score(metric, text=ORIGINAL, reference=ORIGINAL).score == 100.0
    assert 0 < metric_score(metric, text=PERTURBED, reference=ORIGINAL).score < 100
    assert metric_score(metric, text="", reference=ORIGINAL).score == 0.0


def test_rouge_l_is_the_f_measure_times_100():
    # LCS of 5 and 6 tokens is 5: P = 1, R = 5/6, F = 2PR/(P+R) = 10/11
    score = metric_score("rougeL", text="the cat sat on mat", reference="the cat sat on the mat")
    assert score.score == pytest.approx(100 * 10 / 11, abs=1e-4)
    assert "ROUGE-L" in score.detail


def test_unknown_metric_is_refused():
    with pytest.raises(KeyError):
        metric_score("meteor", text="a", reference="a")


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["BLEU", "chrF", "ROUGE-L"])
def test_a_metric_run_scores_every_text_of_the_demo(demo, name):
    run = work(new_run(demo, Judge.objects.get(name=name)))
    assert (run.status, run.total, run.done, run.failed, run.cached) == ("done", 20, 20, 0, 0)
    calls = run.calls.all()
    assert {c.score for c in calls if c.perturbation_id is None} == {100.0}
    assert all(c.score < 100 for c in calls if c.perturbation_id is not None)
    assert all(c.parse_status == "parsed" and c.raw_response for c in calls)
    assert run.http_requests == 0 and run.prompt_tokens == 0
