"""char_deletion, typos, spelling_mistake."""

from __future__ import annotations

import random

import pytest
import typo.Errer
import typo.keyboardlayouts.en_default
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apps.corpus.perturbers import PerturbationNotApplicable
from apps.corpus.perturbers.character import (
    char_deletion,
    spelling_mistake,
    spelling_targets,
    typo_targets,
    typos,
)
from apps.corpus.perturbers.segmentation import segment
from tests.corpus.perturbers.perturber_texts import (
    alnum_deleted,
    check_result,
    osa_distance,
    texts,
)

FAST = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
seeds = st.integers(0, 2**32 - 1)
STORY = (
    "Josh wants to buy a tablet and doesn't know which brand he should choose. According to "
    "Brian, other brands are better than Apple and he can get a Samsung tablet cheaper. Josh "
    "will call Brian after work to talk about it.\n\n```python\nprint('untouched code')\n```\n"
    "See `inline_code()` and https://example.com/path for more."
)


# --- char_deletion ---------------------------------------------------------------------------


@FAST
@given(texts, seeds, st.integers(1, 40))
def test_char_deletion_deletes_exactly_k_alphanumerics(text: str, seed: int, k: int) -> None:
    available = len(segment(text).alnum_positions)
    try:
        result = char_deletion(text, seed=seed, k=k)
    except PerturbationNotApplicable:
        assert available < k
        return
    check_result(text, result, level="character")
    assert alnum_deleted(text, result.text) == k
    assert len(result.edits) == k
    assert all(e.new == "" and len(e.old) == 1 and e.old.isalnum() for e in result.edits)
    assert result.params["k"] == k and len(result.params["positions"]) == k
    assert char_deletion(text, seed=seed, k=k) == result


def test_char_deletion_leaves_code_urls_and_markers_alone() -> None:
    for seed in range(30):
        out = char_deletion(STORY, seed=seed, k=60).text
        assert "```python\nprint('untouched code')\n```" in out
        assert "`inline_code()`" in out and "https://example.com/path" in out


def test_char_deletion_not_applicable_and_bad_params() -> None:
    with pytest.raises(PerturbationNotApplicable, match="needs 5 alphanumeric"):
        char_deletion("2.", seed=0, k=5)
    with pytest.raises(PerturbationNotApplicable):
        char_deletion("`all code here`", seed=0, k=1)
    with pytest.raises(ValueError):
        char_deletion(STORY, seed=0, k=0)
    with pytest.raises(TypeError):
        char_deletion(STORY, seed=0, k=True)
    with pytest.raises(TypeError):
        char_deletion(STORY, seed="0", k=1)  # type: ignore[arg-type]


def test_char_deletion_can_delete_everything_deletable() -> None:
    assert char_deletion("ab, c!", seed=1, k=3).text == ", !"


def test_seeds_matter() -> None:
    assert len({char_deletion(STORY, seed=s, k=5).text for s in range(10)}) > 1


# --- typos -----------------------------------------------------------------------------------


@FAST
@given(texts, seeds, st.integers(1, 25))
def test_typos_one_typo_in_each_of_k_words(text: str, seed: int, k: int) -> None:
    state = random.getstate()
    try:
        result = typos(text, seed=seed, k=k)
    except PerturbationNotApplicable:
        assert len(typo_targets(text)) < k
        return
    finally:
        assert random.getstate() == state  # the global generator is left alone
        assert typo.Errer.random is random
        assert typo.keyboardlayouts.en_default.random is random
    check_result(text, result, level="character")
    words = set(segment(text).words)
    assert len(result.edits) == k
    for e in result.edits:
        assert (e.start, e.end) in words  # whole words, each one once
        # exactly one typo (char_swap keeps the case of each position: "Ab" -> "Ba")
        assert osa_distance(e.old, e.new) == 1 or osa_distance(e.old.lower(), e.new.lower()) == 1
    assert len(result.params["operations"]) == k
    assert typos(text, seed=seed, k=k) == result


def test_typos_deterministic_across_interleaved_global_random_use() -> None:
    first = typos(STORY, seed=42, k=20)
    random.seed(123)
    random.random()
    assert typos(STORY, seed=42, k=20) == first
    assert "print('untouched code')" in first.text and "`inline_code()`" in first.text


def test_typos_not_applicable() -> None:
    with pytest.raises(PerturbationNotApplicable, match="needs 3 words"):
        typos("Two words.", seed=0, k=3)
    with pytest.raises(PerturbationNotApplicable):
        typos("Ünïcödé wörds ónly", seed=0, k=1)  # typo's tables are ASCII


# --- spelling_mistake ------------------------------------------------------------------------


@FAST
@given(texts, seeds, st.integers(1, 15))
def test_spelling_mistake_misspells_k_words(text: str, seed: int, k: int) -> None:
    try:
        result = spelling_mistake(text, seed=seed, k=k)
    except PerturbationNotApplicable:
        assert len(spelling_targets(text)) < k
        return
    check_result(text, result, level="character")
    words = set(segment(text).words)
    assert len(result.edits) == k
    for e in result.edits:
        assert (e.start, e.end) in words
        assert e.new.isalpha() and e.new[0] == e.old[0]
        assert osa_distance(e.old, e.new) == 1
    assert spelling_mistake(text, seed=seed, k=k) == result


def test_spelling_mistake_examples() -> None:
    result = spelling_mistake(STORY, seed=3, k=6)
    assert set(result.params["operations"]) <= {"double", "drop", "transpose", "vowel"}
    with pytest.raises(PerturbationNotApplicable, match="3\\+ letters"):
        spelling_mistake("A b c 12 ok.", seed=0, k=1)
