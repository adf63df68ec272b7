import math
from itertools import product

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apps.analysis.stats.comparisons import (
    AFFECTED,
    NOT_AFFECTED,
    MatchRate,
    annotation_consistency,
    cell_verdicts,
    cell_votes,
    match_rate,
    plurality_verdict,
    share_over_texts,
    verdict_of,
    vote_all,
    vote_vote,
)


def test_annotation_consistency_spec_example():
    assert annotation_consistency(["A", "A", "C", "D"]) == 0.5  # 2 of 4, D in the denominator
    assert annotation_consistency(["worse", "worse", "same", "uncertain"]) == 0.5
    assert annotation_consistency(["B", "B", "B", "B"]) == 1.0
    assert annotation_consistency(["D", "D"]) == 0.0  # nobody committed


def test_annotation_consistency_rejects_bad_input():
    with pytest.raises(ValueError):
        annotation_consistency([])
    with pytest.raises(ValueError, match="unknown"):
        annotation_consistency(["A", "maybe"])


@settings(max_examples=80, deadline=None, database=None)
@given(
    st.lists(st.sampled_from("ABCD"), min_size=1, max_size=16).filter(
        lambda xs: any(x != "D" for x in xs)
    )
)
def test_consistency_lies_in_one_over_n_to_one(options):
    value = annotation_consistency(options)
    assert 1 / len(options) <= value <= 1.0


def test_verdict_of_every_relation():
    assert verdict_of("worse") == AFFECTED
    assert verdict_of("same") == NOT_AFFECTED
    assert verdict_of("better") == NOT_AFFECTED
    assert verdict_of("uncertain") is None
    with pytest.raises(ValueError):
        verdict_of("awful")  # type: ignore[arg-type]


def test_plurality_verdict_branches():
    assert plurality_verdict([AFFECTED, AFFECTED, NOT_AFFECTED]) == AFFECTED
    assert plurality_verdict([NOT_AFFECTED, None, None, AFFECTED, NOT_AFFECTED]) == NOT_AFFECTED
    assert plurality_verdict([AFFECTED, NOT_AFFECTED]) is None  # tie
    assert plurality_verdict([None, None]) is None  # everyone uncertain
    assert plurality_verdict([]) is None


def test_same_and_better_are_pooled_before_counting():
    # A raw plurality over options would say "worse" (2 vs 1 vs 1); pooled it is a 2-2 tie.
    assert vote_all([["worse", "worse", "same", "better"]]) is None
    # ...and here raw options tie 2-2 (worse/better) while pooled "not affected" wins 3-2.
    assert vote_all([["worse", "worse", "same", "better", "better"]]) == NOT_AFFECTED
    # uncertain abstains rather than counting against either side
    assert vote_all([["worse", "uncertain", "uncertain"]]) == AFFECTED


def test_vote_all_and_vote_vote_can_differ():
    samples = [
        ["worse", "worse", "worse", "worse"],  # affected 4-0
        ["worse", "same", "same", "uncertain"],  # not affected 2-1
        ["same", "same", "same", "worse"],  # not affected 3-1
        ["worse", "worse", "worse", "same"],  # affected 3-1
    ]
    # vote_all: affected 4+1+1+3 = 9 vs not 0+2+3+1 = 6
    assert vote_all(samples) == AFFECTED
    # vote_vote: samples split 2-2 -> no verdict
    assert vote_vote(samples) is None


def test_vote_vote_tied_sample_abstains():
    samples = [["worse", "same"], ["worse", "worse", "same"], ["uncertain"]]
    assert vote_vote(samples) == AFFECTED  # samples 1 and 3 abstain, sample 2 decides
    assert vote_all(samples) == AFFECTED  # 3 vs 2


def test_cell_verdicts_by_method():
    cells = {
        ("negation", "Coherence"): [["same", "same"], ["same", "worse"]],
        ("negation", "Faithfulness"): [["worse", "worse"], ["same", "worse"]],
    }
    assert cell_verdicts(cells, "vote_all") == {
        ("negation", "Coherence"): NOT_AFFECTED,
        ("negation", "Faithfulness"): AFFECTED,
    }
    assert cell_verdicts(cells, "vote_vote") == {
        ("negation", "Coherence"): NOT_AFFECTED,  # sample verdicts: not, none -> not
        ("negation", "Faithfulness"): AFFECTED,
    }


def _cells(n_kinds=18, n_aspects=11):
    return list(product(range(n_kinds), range(n_aspects)))


def test_match_rate_paper_arithmetic():
    cells = _cells()
    assert len(cells) == 198
    expected = {cell: AFFECTED if (cell[0] + cell[1]) % 3 == 0 else NOT_AFFECTED for cell in cells}
    human = dict(expected)
    flip = {AFFECTED: NOT_AFFECTED, NOT_AFFECTED: AFFECTED}
    for cell in cells[:6]:
        human[cell] = flip[expected[cell]]  # 6 disagreements
    for cell in cells[6:11]:
        human[cell] = None  # 5 undecided: misses, but kept in the denominator
    result = match_rate(human, expected)
    assert result == MatchRate(matched=187, total=198, undecided=5)
    assert round(result.rate, 4) == 0.9444  # the paper's detailed / vote_all figure
    for cell in cells[11:24]:
        del human[cell]  # absent cells count as undecided
    result = match_rate(human, expected)
    assert (result.matched, result.undecided) == (174, 18)
    assert round(result.rate, 4) == 0.8788  # the paper's detailed / vote_vote figure


def test_match_rate_edge_cases():
    assert math.isnan(match_rate({}, {}).rate)
    with pytest.raises(ValueError, match="no expected impact"):
        match_rate({("x", "y"): AFFECTED}, {})


def _plurality_probability(n, correct, wrong):
    """Exact P(correct votes > wrong votes) for n annotations, each correct / wrong /
    abstaining with the given probabilities (multinomial sum)."""
    abstain = 1.0 - correct - wrong
    total = 0.0
    for c in range(n + 1):
        for w in range(n - c + 1):
            if c > w:
                ways = math.comb(n, c) * math.comb(n - c, w)
                total += ways * correct**c * wrong**w * abstain ** (n - c - w)
    return total


def test_synthetic_annotators_reach_the_predicted_match_rate():
    # Ground truth = expectation on 10 studies x 198 cells; 4 samples x 4 annotators each.
    # Every annotator abstains ("uncertain") with prob 0.15, otherwise errs with prob 0.35.
    rng = np.random.default_rng(20240501)
    p_uncertain, p_error = 0.15, 0.35
    correct, wrong = (1 - p_uncertain) * (1 - p_error), (1 - p_uncertain) * p_error
    cells = [(study, *cell) for study in range(10) for cell in _cells()]
    truth = {cell: AFFECTED if rng.random() < 0.3 else NOT_AFFECTED for cell in cells}

    def annotate(verdict):
        u = rng.random()
        if u < p_uncertain:
            return "uncertain"
        erred = rng.random() < p_error
        if (verdict == AFFECTED) != erred:
            return "worse"
        return "same" if rng.random() < 0.8 else "better"

    annotations = {
        cell: [[annotate(truth[cell]) for _ in range(4)] for _ in range(4)] for cell in cells
    }
    n = len(cells)
    # vote_all: one plurality over 16 annotations.
    p_all = _plurality_probability(16, correct, wrong)
    rate_all = match_rate(cell_verdicts(annotations, "vote_all"), truth).rate
    assert abs(rate_all - p_all) < 4 * math.sqrt(p_all * (1 - p_all) / n)
    # vote_vote: a sample is right / wrong / undecided, then a plurality over 4 samples.
    s_right = _plurality_probability(4, correct, wrong)
    s_wrong = _plurality_probability(4, wrong, correct)
    p_vote = _plurality_probability(4, s_right, s_wrong)
    rate_vote = match_rate(cell_verdicts(annotations, "vote_vote"), truth).rate
    assert abs(rate_vote - p_vote) < 4 * math.sqrt(p_vote * (1 - p_vote) / n)
    assert p_vote < p_all  # two-stage voting throws information away, as in the paper


def test_cell_votes_and_their_share_over_texts():
    """Text 1: worse, worse, same; text 2: worse, uncertain, worse -> 4 affected, 1 not,
    1 abstains; share 4/5 = 0.8 with the Wilson interval of 1.6 of 2 texts,
    [0.2231, 0.9824] (test_reports works it by hand)."""
    votes = cell_votes([["worse", "worse", "same"], ["worse", "uncertain", "worse"]])
    assert (votes.affected, votes.not_affected, votes.uncertain, votes.texts) == (4, 1, 1, 2)
    assert votes.annotations == 6
    share = votes.affected_share
    assert (share.value, share.n, share.clusters) == (0.8, 5, 2)
    assert (round(share.ci_low, 4), round(share.ci_high, 4)) == (0.2231, 0.9824)
    # one text per vote: the plain Wilson interval of 4 of 5
    assert share_over_texts(4, 5, 5).ci_low == pytest.approx(0.3755, abs=1e-4)
    assert math.isnan(share_over_texts(0, 0, 0).value)
