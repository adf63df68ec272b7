"""word_exchange, word_span_deletion."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apps.corpus.perturbers import PerturbationNotApplicable
from apps.corpus.perturbers.segmentation import segment, tokenize_words
from apps.corpus.perturbers.word import (
    exchange_pairs,
    longest_run,
    max_disjoint_pairs,
    word_exchange,
    word_span_deletion,
)
from tests.corpus.perturbers.perturber_texts import check_result, markdown, prose, texts

FAST = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
seeds = st.integers(0, 2**32 - 1)


# --- word_exchange ---------------------------------------------------------------------------


@FAST
@given(texts, seeds, st.integers(1, 12))
def test_word_exchange_swaps_k_adjacent_pairs(text: str, seed: int, k: int) -> None:
    try:
        result = word_exchange(text, seed=seed, k=k)
    except PerturbationNotApplicable:
        assert len(max_disjoint_pairs(exchange_pairs(text))) < k
        return
    check_result(text, result, level="word")
    words = segment(text).words
    assert len(result.edits) == k
    for i, e in zip(result.params["pairs"], result.edits, strict=True):
        a, b = words[i], words[i + 1]
        gap = text[a.end : b.start]
        assert gap and not gap.strip(" \t")
        assert (e.start, e.end) == (a.start, b.end)
        assert e.new == text[b.start : b.end] + gap + text[a.start : a.end]
    assert word_exchange(text, seed=seed, k=k) == result


@FAST
@given(st.one_of(prose(), markdown()), seeds, st.integers(1, 5))
def test_word_exchange_keeps_the_multiset_of_words(text: str, seed: int, k: int) -> None:
    try:
        result = word_exchange(text, seed=seed, k=k)
    except PerturbationNotApplicable:
        return
    assert Counter(tokenize_words(result.text)) == Counter(tokenize_words(text))
    assert tokenize_words(result.text) != tokenize_words(text)


def test_word_exchange_example_and_limits() -> None:
    assert word_exchange("buy a tablet", seed=0, k=1).text in {"a buy tablet", "buy tablet a"}
    with pytest.raises(PerturbationNotApplicable):
        word_exchange("same same same", seed=0, k=1)  # swapping equal words changes nothing
    with pytest.raises(PerturbationNotApplicable):
        word_exchange("Stop. Go! Now?", seed=0, k=1)  # punctuation between all words
    with pytest.raises(PerturbationNotApplicable, match="needs 2 disjoint"):
        word_exchange("one two three", seed=0, k=2)  # pairs (0, 1) and (1, 2) overlap
    assert word_exchange("a b c d", seed=5, k=2).text == "b a d c"


# --- word_span_deletion ----------------------------------------------------------------------


@FAST
@given(texts, seeds, st.integers(1, 30))
def test_word_span_deletion_removes_k_consecutive_words(text: str, seed: int, k: int) -> None:
    try:
        result = word_span_deletion(text, seed=seed, k=k)
    except PerturbationNotApplicable as refused:
        assert longest_run(text) < k or "changes the words around it" in str(refused)
        return
    check_result(text, result, level="word")
    (edit,) = result.edits
    assert edit.new == "" and "\n" not in edit.old
    words = segment(text).words
    inside = [i for i, (s, e) in enumerate(words) if edit.start <= s and e <= edit.end]
    first = result.params["first_word"]
    assert inside == list(range(first, first + k))
    assert not any(s < edit.start < e or s < edit.end < e for s, e in words)  # no word cut
    # the only characters removed besides the words: what lies between them, plus spaces
    outer = edit.old[words[first].start - edit.start : words[first + k - 1].end - edit.start]
    assert edit.old.strip(" \t") == outer
    assert word_span_deletion(text, seed=seed, k=k) == result


@FAST
@given(st.one_of(prose(), markdown()), seeds, st.integers(1, 8))
def test_word_span_deletion_word_sequence(text: str, seed: int, k: int) -> None:
    try:
        result = word_span_deletion(text, seed=seed, k=k)
    except PerturbationNotApplicable:
        return
    before = tokenize_words(text)
    i = result.params["first_word"]
    assert tokenize_words(result.text) == before[:i] + before[i + k :]


def test_a_span_deleted_from_a_line_start_never_turns_a_number_into_a_list_marker() -> None:
    # found by the property above: deleting "Aa aa aa aa " left "42. Aa." at the line's start,
    # which reads as an ordered list's marker: the word "42" was gone too
    text = "Aa aa.\nAa aa aa aa 42. Aa. Aa aa aa aa aa."
    for seed in range(30):
        result = word_span_deletion(text, seed=seed, k=4)
        i = result.params["first_word"]
        before = tokenize_words(text)
        assert tokenize_words(result.text) == before[:i] + before[i + 4 :], result.text


def test_word_span_deletion_whitespace() -> None:
    text = "He ran home. She slept."
    outs = {word_span_deletion(text, seed=s, k=1).text for s in range(40)}
    assert outs == {
        "ran home. She slept.",
        "He home. She slept.",
        "He ran. She slept.",
        "He ran home. slept.",
        "He ran home. She.",
    }
    assert word_span_deletion("1. Spoon and fork", seed=0, k=3).text == "1. "
    for s in range(20):
        assert word_span_deletion("1. Spoon and fork", seed=s, k=1).text.startswith("1. ")


def test_word_span_deletion_stays_on_one_line() -> None:
    with pytest.raises(PerturbationNotApplicable, match="longest run has 2"):
        word_span_deletion("one two\nthree four\nfive", seed=0, k=3)
