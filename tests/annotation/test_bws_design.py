"""The tuples of a best-worst scaling design (issue 38) as a pure function: no database."""

import math
import time
from collections import Counter
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apps.annotation.models.best_worst import BwsDesignSize, bws_design_size, bws_tuples


def appearances(tuples):
    return Counter(text for members in tuples for text in members)


def pair_counts(tuples):
    return Counter(frozenset(pair) for members in tuples for pair in combinations(members, 2))


@pytest.mark.parametrize("n", [4, 5, 6, 7, 9, 10, 13, 20, 21, 50, 101, 1000])
def test_standard_design_2n_tuples_of_4_each_text_8_times(n):
    texts = [f"t{i}" for i in range(n)]
    tuples = bws_tuples(texts)
    assert len(tuples) == 2 * n  # N x 8 appearances / 4 a tuple
    assert {len(members) for members in tuples} == {4}
    assert all(len(set(members)) == 4 for members in tuples)  # no text twice in a tuple
    assert appearances(tuples) == dict.fromkeys(texts, 8)


@pytest.mark.parametrize(("n", "size", "per_text"), [(10, 4, 3), (7, 3, 4), (11, 4, 5)])
def test_uneven_totals_show_a_few_texts_once_more(n, size, per_text):
    # 10 x 3 = 30 slots fill 8 tuples of 4 (32): two texts are shown 4 times, the rest 3.
    tuples = bws_tuples(list(range(n)), size=size, per_text=per_text)
    plan = bws_design_size(n, size=size, per_text=per_text)
    assert len(tuples) == plan.tuples == math.ceil(n * plan.per_text / size)
    counts = Counter(appearances(tuples).values())
    assert counts == Counter({plan.per_text: n - plan.extra, plan.per_text + 1: plan.extra})
    assert all(len(set(members)) == size for members in tuples)


@settings(max_examples=80, deadline=None, database=None)
@given(st.data())
def test_invariants_for_any_sizes(data):
    n = data.draw(st.integers(2, 60), label="texts")
    size = data.draw(st.integers(2, min(n, 7)), label="size")
    per_text = data.draw(st.none() | st.integers(1, 12), label="per_text")
    seed = data.draw(st.integers(0, 2**32), label="seed")
    tuples = bws_tuples(list(range(n)), size=size, per_text=per_text, seed=seed)
    plan = bws_design_size(n, size=size, per_text=per_text)
    assert len(tuples) == plan.tuples and all(len(set(t)) == size for t in tuples)
    counts = Counter(appearances(tuples).values())
    assert counts == Counter({plan.per_text: n - plan.extra, plan.per_text + 1: plan.extra})


def test_design_size_without_building():
    assert bws_design_size(10_000) == BwsDesignSize(10_000, 4, 8, 20_000, 0)
    assert bws_design_size(10, size=4, per_text=3) == BwsDesignSize(10, 4, 3, 8, 2)
    assert bws_design_size(9, size=3) == BwsDesignSize(9, 3, 6, 18, 0)  # still 2N tuples


@pytest.mark.parametrize("n", [5, 8, 10, 13, 20, 50, 200])
def test_pairs_meet_about_equally_often(n):
    # lambda = tuples x C(4, 2) / C(N, 2) meetings a pair; none more than one above ceil.
    tuples = bws_tuples(list(range(n)))
    lam = len(tuples) * 6 / (n * (n - 1) / 2)
    assert max(pair_counts(tuples).values()) <= math.ceil(lam) + 1


def test_large_designs_never_show_a_pair_twice():
    # 2000 texts: 4000 tuples, 24,000 pair meetings among 2 million pairs. Laid out at random
    # some pairs would meet twice; the local search separates them.
    assert set(pair_counts(bws_tuples(range(2000))).values()) == {1}


def test_five_texts_every_pair_meets_six_times():
    # 10 tuples of 4 out of 5 texts: each tuple leaves one text out, each text twice; a pair
    # is together in 10 - 2 - 2 = 6 tuples. Exactly balanced.
    assert set(pair_counts(bws_tuples("abcde")).values()) == {6}


def test_deterministic_for_a_seed():
    texts = [f"text {i}" for i in range(37)]
    assert bws_tuples(texts, seed=3) == bws_tuples(texts, seed=3)
    assert bws_tuples(texts, seed=3) != bws_tuples(texts, seed=4)


def test_other_sizes():
    for size in (2, 3, 5):
        tuples = bws_tuples(range(12), size=size)
        assert len(tuples) == 24 and {len(set(t)) for t in tuples} == {size}
        assert set(appearances(tuples).values()) == {2 * size}


def test_as_many_texts_as_a_tuple_holds():
    tuples = bws_tuples("abcd")
    assert len(tuples) == 8 and {frozenset(t) for t in tuples} == {frozenset("abcd")}


@pytest.mark.parametrize(
    ("texts", "kwargs", "message"),
    [
        ("abc", {}, "3 texts cannot fill a tuple of 4: need at least 4"),
        ("abcd", {"size": 1}, "at least 2 texts, not size=1"),
        ("abcd", {"per_text": 0}, "at least once, not per_text=0"),
        ("abca", {}, "a text is listed twice"),
    ],
)
def test_refuses_impossible_designs(texts, kwargs, message):
    with pytest.raises(ValueError, match=message):
        bws_tuples(texts, **kwargs)


def test_ten_thousand_texts_fast():
    started = time.perf_counter()
    tuples = bws_tuples(range(10_000))
    assert time.perf_counter() - started < 5  # about 0.5 s; loose for a shared machine
    assert len(tuples) == 20_000
    assert set(appearances(tuples).values()) == {8}
    assert max(pair_counts(tuples).values()) <= 2
