"""Minor / major presets scaled to text length."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apps.corpus.perturbers import (
    RULES,
    PerturbationNotApplicable,
    apply_rule,
    degrees_of,
    preset_parameters,
)
from apps.corpus.perturbers.presets import COUNT_PRESETS, MAJOR_MIN_WORDS
from apps.corpus.perturbers.segmentation import segment
from tests.corpus.perturbers.perturber_texts import markdown, prose

FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
GRADED = [name for name, rule in RULES.items() if rule.graded]
VOCAB = [
    "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliett",
    "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango",
    "uniform", "victor", "whiskey", "xray", "yankee", "zulu",
]  # fmt: skip


def text_of(n_words: int, per_sentence: int = 8) -> str:
    """n distinct-neighbour words in sentences of ``per_sentence`` words."""
    words = [w for w, _ in zip(itertools.cycle(VOCAB), range(n_words), strict=False)]
    sents = [words[i : i + per_sentence] for i in range(0, n_words, per_sentence)]
    return " ".join(" ".join(s).capitalize() + "." for s in sents)


def k(rule: str, degree: str, text: str) -> int | str:
    return preset_parameters(rule, degree, text)["k"]


@pytest.mark.parametrize(
    ("words", "minor", "major"),
    [
        (58, 10, 50),  # SummEval: the DHP setting exactly
        (24, 5, 25),  # Answer Equivalence: exactly
        (115, 19, 95),  # SumPubMed: paper 20 / 100
        (71, 12, 60),  # WMT: paper 10 / 50
        (330, 55, 275),  # FBI median answer
        (2000, 100, 500),  # capped
    ],
)
@pytest.mark.parametrize("rule", ["char_deletion", "typos"])
def test_character_presets_reproduce_dhp(rule: str, words: int, minor: int, major: int) -> None:
    text = text_of(words)
    assert len(segment(text).words) == words
    assert k(rule, "minor", text) == minor
    if rule == "typos" and words == 24:
        major = 24  # one typo per word at most: DHP's 25 typos do not fit in 24 words
    assert k(rule, "major", text) == major


def test_word_span_presets_reproduce_dhp() -> None:
    assert k("word_span_deletion", "minor", text_of(71)) == 5  # WMT: 5 / 25
    assert k("word_span_deletion", "major", text_of(71)) == 25
    assert k("word_span_deletion", "minor", text_of(24)) == 2
    assert k("word_span_deletion", "major", text_of(24)) == 10
    assert k("word_span_deletion", "major", text_of(2000, per_sentence=2000)) == 100


def test_story_cloze_length_has_no_major() -> None:
    story = "Tom went to the beach today."  # 6 words, like a Story Cloze ending
    assert k("char_deletion", "minor", story) == 5
    assert k("typos", "minor", story) == 5
    with pytest.raises(PerturbationNotApplicable, match="major"):
        preset_parameters("char_deletion", "major", story)
    assert len(segment(text_of(MAJOR_MIN_WORDS)).words) == MAJOR_MIN_WORDS
    preset_parameters("char_deletion", "major", text_of(MAJOR_MIN_WORDS))


def test_feasibility_limits() -> None:
    with pytest.raises(PerturbationNotApplicable, match="too short"):
        preset_parameters("char_deletion", "minor", "2.")
    # never more than half the alphanumerics
    assert k("char_deletion", "minor", "Go on, ok.") == 3
    # one typo per ASCII word
    assert k("typos", "minor", "Go on, ok.") == 3
    # word exchange: the number of disjoint adjacent pairs
    assert k("word_exchange", "minor", "One two. Three four.") == 1


def test_sentence_presets() -> None:
    two, six = "One here. Two here.", text_of(48, per_sentence=8)
    assert preset_parameters("sentence_reordering", "minor", two) == {"k": 2}
    with pytest.raises(PerturbationNotApplicable, match="at least 3 sentences"):
        preset_parameters("sentence_reordering", "major", two)
    assert preset_parameters("sentence_reordering", "major", six) == {"k": "all"}
    assert preset_parameters("sentence_deletion", "minor", two) == {"k": 1}
    assert preset_parameters("sentence_deletion", "major", six) == {"k": 2}
    assert preset_parameters("sentence_deletion", "major", text_of(96)) == {"k": 4}
    with pytest.raises(PerturbationNotApplicable):
        preset_parameters("sentence_deletion", "minor", "Just one.")


def test_degrees() -> None:
    assert degrees_of("char_deletion") == ("minor", "major")
    assert degrees_of("random_answer") == (None,)
    assert preset_parameters("sentence_exchange", None, "A. B.") == {}
    with pytest.raises(ValueError):
        preset_parameters("sentence_exchange", "minor", "A. B.")
    with pytest.raises(ValueError):
        preset_parameters("char_deletion", None, "A. B.")
    with pytest.raises(ValueError):
        preset_parameters("char_deletion", "huge", "A. B.")
    with pytest.raises(KeyError):
        preset_parameters("no_such_rule", "minor", "A. B.")
    assert set(COUNT_PRESETS) | {"sentence_reordering", "sentence_deletion"} == set(GRADED)


def test_apply_rule() -> None:
    text = text_of(58)
    r = apply_rule("char_deletion", text, seed=1, degree="minor")
    assert r.params["k"] == 10 and r.params["degree"] == "minor"
    assert len(text) - len(r.text) == 10
    r = apply_rule("char_deletion", text, seed=1, degree="minor", k=3)  # explicit wins
    assert r.params["k"] == 3
    r = apply_rule("random_answer", text, seed=1, pool=["Other."])
    assert r.text == "Other." and r.params["degree"] is None


@FAST
@given(st.one_of(prose(max_sentences=12), markdown()), st.integers(0, 1000))
def test_presets_are_applicable_and_graded(text: str, seed: int) -> None:
    """Whenever a preset exists the rule applies with it, and major > minor."""
    for rule in GRADED:
        ks = {}
        for degree in ("minor", "major"):
            try:
                params = preset_parameters(rule, degree, text)
            except PerturbationNotApplicable:
                continue
            try:
                RULES[rule](text, seed=seed, **params)
            except PerturbationNotApplicable as exc:
                assert exc.reason == "all sentences are identical", (rule, degree, exc)
            ks[degree] = params["k"]
        if len(ks) == 2 and isinstance(ks["major"], int):
            assert ks["major"] > ks["minor"]
