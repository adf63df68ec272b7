"""sentence_exchange, sentence_reordering, sentence_deletion, random_ending, random_answer,
wrong_ending."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apps.corpus.perturbers import PerturbationNotApplicable
from apps.corpus.perturbers.segmentation import segment, split_sentences
from apps.corpus.perturbers.sentence import (
    random_answer,
    random_ending,
    sentence_deletion,
    sentence_exchange,
    sentence_reordering,
    wrong_ending,
)
from tests.corpus.perturbers.perturber_texts import (
    check_result,
    markdown,
    prose,
    sentences,
    texts,
)

FAST = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
seeds = st.integers(0, 2**32 - 1)
structured = st.one_of(prose(), markdown())
STORY = (
    "Josh wants to buy a tablet. According to Brian, other brands are better. "
    "Josh will call Brian after work."
)


# --- reordering and exchange -----------------------------------------------------------------


def _check_reordering(text: str, result_k: int | str, seed: int, rule: str) -> None:
    fn = sentence_exchange if rule == "sentence_exchange" else sentence_reordering
    kwargs = {} if rule == "sentence_exchange" else {"k": result_k}
    seg = segment(text)
    originals = seg.sentence_texts()
    n = len(originals)
    size = n if result_k == "all" else result_k
    try:
        result = fn(text, seed=seed, **kwargs)
    except PerturbationNotApplicable:
        assert n < 2 or (isinstance(size, int) and size > n) or len(set(originals)) < 2
        return
    check_result(text, result, level="sentence")
    order = result.params["order"]
    assert sorted(order) == list(range(n))
    moved = [p for p in range(n) if order[p] != p]
    assert set(moved) <= set(result.params["slots"]) and len(result.params["slots"]) == size
    assert any(originals[order[p]] != originals[p] for p in range(n))
    # the output is the text with each sentence slot refilled, separators untouched
    pieces, pos = [], 0
    for p, (s, e) in enumerate(seg.sentences):
        pieces += [text[pos:s], originals[order[p]]]
        pos = e
    assert "".join([*pieces, text[pos:]]) == result.text
    if size == 2:
        assert len(result.edits) == 2 and result.edits[0].old == result.edits[1].new
    assert fn(text, seed=seed, **kwargs) == result


@FAST
@given(texts, seeds, st.sampled_from([2, 3, 5, "all"]))
def test_sentence_reordering(text: str, seed: int, k: int | str) -> None:
    _check_reordering(text, k, seed, "sentence_reordering")


@FAST
@given(texts, seeds)
def test_sentence_exchange(text: str, seed: int) -> None:
    _check_reordering(text, 2, seed, "sentence_exchange")


@FAST
@given(structured, seeds, st.sampled_from([2, "all"]))
def test_reordering_keeps_the_multiset_of_sentences(text: str, seed: int, k: int | str) -> None:
    try:
        result = sentence_reordering(text, seed=seed, k=k)
    except PerturbationNotApplicable:
        return
    assert Counter(split_sentences(result.text)) == Counter(split_sentences(text))
    assert split_sentences(result.text) != split_sentences(text)


def test_reordering_not_applicable_and_bad_k() -> None:
    with pytest.raises(PerturbationNotApplicable, match="at least 2 sentences"):
        sentence_exchange("Only one sentence here.", seed=0)
    with pytest.raises(PerturbationNotApplicable, match="identical"):
        sentence_reordering("Yes. Yes. Yes.", seed=0, k="all")
    with pytest.raises(PerturbationNotApplicable, match="needs 4 sentences"):
        sentence_reordering(STORY, seed=0, k=4)
    with pytest.raises(ValueError):
        sentence_reordering(STORY, seed=0, k=1)
    with pytest.raises(ValueError):
        sentence_reordering(STORY, seed=0, k="some")


def test_major_reordering_always_changes_two_sentence_text() -> None:
    for seed in range(50):
        assert sentence_reordering("First one. Second one.", seed=seed, k="all").text == (
            "Second one. First one."
        )


def test_reordering_keeps_list_markers_and_code_in_place() -> None:
    text = "1. Alpha here. Beta here.\n2. Gamma here.\n```\nx = 1. Y = 2.\n```\n- Delta here."
    for seed in range(20):
        out = sentence_reordering(text, seed=seed, k="all").text
        assert out.startswith("1. ") and "\n2. " in out and "\n- " in out
        assert "\n```\nx = 1. Y = 2.\n```\n" in out


# --- deletion --------------------------------------------------------------------------------


@FAST
@given(texts, seeds, st.integers(1, 4))
def test_sentence_deletion_invariants(text: str, seed: int, k: int) -> None:
    n = len(segment(text).sentences)
    try:
        result = sentence_deletion(text, seed=seed, k=k)
    except PerturbationNotApplicable:
        assert n < k + 1
        return
    check_result(text, result, level="sentence")
    assert all(e.new == "" for e in result.edits)
    deleted = result.params["sentences"]
    assert len(deleted) == k == len(set(deleted))
    spans = segment(text).sentences
    for i in deleted:  # each deleted sentence lies inside a removed region
        assert any(e.start <= spans[i].start and spans[i].end <= e.end for e in result.edits)
    for i in set(range(n)) - set(deleted):  # the others are untouched
        assert not any(e.start < spans[i].end and spans[i].start < e.end for e in result.edits)
    assert sentence_deletion(text, seed=seed, k=k) == result


@FAST
@given(structured, seeds, st.integers(1, 3))
def test_sentence_deletion_removes_exactly_k_sentences(text: str, seed: int, k: int) -> None:
    try:
        result = sentence_deletion(text, seed=seed, k=k)
    except PerturbationNotApplicable:
        return
    before, after = Counter(split_sentences(text)), Counter(split_sentences(result.text))
    assert not after - before
    assert (before - after).total() == k


def test_sentence_deletion_whitespace_and_lines() -> None:
    assert {sentence_deletion("A one. B two.", seed=s).text for s in range(20)} == {
        "A one.",
        "B two.",
    }
    text = "Intro here.\n1. Spoon.\n2. Balloon.\n"
    outs = {sentence_deletion(text, seed=s).text for s in range(30)}
    assert outs == {
        "1. Spoon.\n2. Balloon.\n",
        "Intro here.\n2. Balloon.\n",
        "Intro here.\n1. Spoon.\n",
    }
    assert sentence_deletion("Keep this.\nDrop this.", seed=1).text in {"Keep this.", "Drop this."}
    with pytest.raises(PerturbationNotApplicable, match="at least 2"):
        sentence_deletion("One sentence only.", seed=0)


# --- endings and answers from elsewhere ------------------------------------------------------


@FAST
@given(structured, st.lists(st.one_of(prose(), texts), max_size=6), seeds)
def test_random_ending(text: str, pool: list[str], seed: int) -> None:
    try:
        result = random_ending(text, seed=seed, pool=pool)
    except PerturbationNotApplicable:
        own = segment(text).sentences
        assert not own or all(
            not p.strip()
            or p.strip() == text.strip()
            or not segment(p).sentences
            or split_sentences(p)[-1] == split_sentences(text)[-1]
            for p in pool
        )
        return
    check_result(text, result, level="sentence")
    source = pool[result.params["source_index"]]
    assert source.strip() != text.strip()
    (edit,) = result.edits
    last = segment(text).sentences[-1]
    assert (edit.start, edit.end) == tuple(last)
    assert edit.new == split_sentences(source)[-1]
    assert random_ending(text, seed=seed, pool=pool) == result


@FAST
@given(st.lists(sentences(), min_size=1, max_size=5), st.lists(prose(), min_size=1, max_size=5))
def test_random_ending_replaces_only_the_last_sentence(own: list[str], pool: list[str]) -> None:
    text = " ".join(own)
    try:
        result = random_ending(text, seed=0, pool=pool)
    except PerturbationNotApplicable:
        return
    source = pool[result.params["source_index"]]
    assert split_sentences(result.text) == [*own[:-1], split_sentences(source)[-1]]


def test_random_ending_skips_the_text_itself_and_same_endings() -> None:
    pool = [STORY, "Other story. Josh will call Brian after work.", "Other story. It rained."]
    for seed in range(20):
        result = random_ending(STORY, seed=seed, pool=pool)
        assert result.params["source_index"] == 2
        assert result.text.endswith("better. It rained.")
    with pytest.raises(PerturbationNotApplicable):
        random_ending(STORY, seed=0, pool=[STORY, " " + STORY + "\n", ""])
    with pytest.raises(PerturbationNotApplicable):
        random_ending(STORY, seed=0, pool=[])
    with pytest.raises(PerturbationNotApplicable, match="no sentence"):
        random_ending("```\ncode only\n```", seed=0, pool=["A. B."])


@FAST
@given(texts, st.lists(texts, max_size=5), seeds)
def test_random_answer(text: str, pool: list[str], seed: int) -> None:
    try:
        result = random_answer(text, seed=seed, pool=pool)
    except PerturbationNotApplicable:
        assert all(not p.strip() or p.strip() == text.strip() for p in pool)
        return
    check_result(text, result, level="answer")
    assert result.text == pool[result.params["source_index"]]
    assert result.text.strip() and result.text.strip() != text.strip()
    assert random_answer(text, seed=seed, pool=pool) == result


def test_random_answer_uses_the_whole_pool() -> None:
    pool = [f"Answer number {i}." for i in range(200)]
    chosen = {random_answer("Mine.", seed=s, pool=pool).params["source_index"] for s in range(200)}
    assert len(chosen) > 100
    assert random_answer("Mine.", seed=0, pool=["Mine.", "", "Yours."]).text == "Yours."


@FAST
@given(structured, sentences(), seeds)
def test_wrong_ending(text: str, ending: str, seed: int) -> None:
    try:
        result = wrong_ending(text, seed=seed, wrong_ending=ending)
    except PerturbationNotApplicable:
        own = split_sentences(text)
        assert not own or own[-1] == ending
        return
    check_result(text, result, level="sentence")
    assert split_sentences(result.text)[-1] == ending
    assert split_sentences(result.text)[:-1] == split_sentences(text)[:-1]


def test_wrong_ending_examples() -> None:
    text = "Tom went fishing. He caught a fish.\n"
    assert wrong_ending(text, seed=0, wrong_ending="  He flew away.\n").text == (
        "Tom went fishing. He flew away.\n"
    )
    with pytest.raises(PerturbationNotApplicable, match="equals"):
        wrong_ending(text, seed=0, wrong_ending="He caught a fish.")
    with pytest.raises(PerturbationNotApplicable, match="empty"):
        wrong_ending(text, seed=0, wrong_ending="  ")
