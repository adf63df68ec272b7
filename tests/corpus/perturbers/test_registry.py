"""The RULES registry and the common signature (also covers base.py)."""

from __future__ import annotations

import inspect
import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apps.corpus.perturbers import (
    RULES,
    Edit,
    PerturbationNotApplicable,
    PerturbResult,
    apply_edits,
    apply_rule,
    degrees_of,
    get_rule,
    preset_parameters,
)
from apps.corpus.perturbers.registry import LEVELS
from tests.corpus.perturbers.perturber_texts import check_result, texts

FAST = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ASPECTS = {
    "Overall", "Readability", "Fluency", "Grammaticality", "Coherence", "Simplicity",
    "Adequacy", "Faithfulness", "Non-hallucination", "Non-contradiction", "Informativeness",
}  # fmt: skip
TEXT = (
    "Josh wants to buy a tablet and does not know which brand he should choose. According to "
    "Brian, other brands are better than Apple and he can get a Samsung tablet cheaper. Josh "
    "will call Brian after work to talk about it."
)
POOL = ["Another story. It ends differently.", "A random answer to another question."]


def extra(name: str) -> dict[str, object]:
    needs = RULES[name].needs
    return {
        **({"pool": POOL} if "pool" in needs else {}),
        **({"wrong_ending": "Then the moon fell."} if "wrong_ending" in needs else {}),
    }


def test_registry_contents() -> None:
    assert set(RULES) == {
        "char_deletion", "typos", "spelling_mistake", "word_exchange", "word_span_deletion",
        "sentence_exchange", "sentence_reordering", "sentence_deletion", "random_ending",
        "random_answer", "wrong_ending",
    }  # fmt: skip
    hu = {n: r.aspect for n, r in RULES.items() if r.source == "hu2024"}
    assert hu == {
        "sentence_exchange": "Coherence",
        "word_exchange": "Grammaticality",
        "spelling_mistake": "Grammaticality",
        "sentence_deletion": "Informativeness",
    }
    for name, rule in RULES.items():
        assert rule.name == name and get_rule(name) is rule
        assert rule.level in LEVELS and rule.description
        assert rule.aspect is None or rule.aspect in ASPECTS
    with pytest.raises(KeyError, match="unknown rule"):
        get_rule("nope")


@pytest.mark.parametrize("name", sorted(RULES))
def test_declared_params_match_the_function(name: str) -> None:
    rule = RULES[name]
    sig = inspect.signature(rule.func)
    params = list(sig.parameters.values())
    assert params[0].name == "text"
    kw = {p.name: p for p in params[1:]}
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in kw.values())
    assert set(kw) == {"seed", *rule.params}
    for p in rule.params:
        assert (kw[p].default is not inspect.Parameter.empty) == (p in rule.optional)
    assert set(rule.needs) <= set(rule.params)


@pytest.mark.parametrize("name", sorted(RULES))
def test_every_rule_runs_through_the_registry(name: str) -> None:
    rule = RULES[name]
    for degree in degrees_of(name):
        state = random.getstate()
        params = {**preset_parameters(name, degree, TEXT), **extra(name)}
        result = rule(TEXT, seed=3, **params)
        assert random.getstate() == state
        assert isinstance(result, PerturbResult) and result.text != TEXT
        assert result.params["rule"] == name and result.params["seed"] == 3
        assert rule(TEXT, seed=3, **params) == result
        assert apply_rule(name, TEXT, seed=3, degree=degree, **extra(name)).text == result.text
        json.dumps(result.provenance())
        assert apply_edits(TEXT, result.edits) == result.text


def test_parameter_checking() -> None:
    with pytest.raises(TypeError, match="unknown parameter"):
        RULES["char_deletion"](TEXT, seed=0, k=1, n=2)
    with pytest.raises(TypeError, match="missing parameter"):
        RULES["char_deletion"](TEXT, seed=0)
    assert RULES["sentence_deletion"](TEXT, seed=0).params["k"] == 1  # optional k
    assert RULES["char_deletion"].apply(TEXT, seed=0, params={"k": 2}).params["k"] == 2


@pytest.mark.parametrize("name", sorted(set(RULES) - {"random_answer"}))
def test_empty_text_is_never_silently_returned(name: str) -> None:
    params = {**extra(name), **({"k": 1} if "k" in RULES[name].params else {})}
    if name == "sentence_reordering":
        params["k"] = 2
    with pytest.raises(PerturbationNotApplicable) as info:
        RULES[name]("", seed=0, **params)
    assert info.value.rule == name and info.value.reason


@FAST
@given(texts, st.integers(0, 10_000))
def test_all_rules_apply_or_refuse(text: str, seed: int) -> None:
    """On any text each rule either makes a valid change or raises PerturbationNotApplicable."""
    for name, rule in RULES.items():
        for degree in degrees_of(name):
            try:
                result = apply_rule(name, text, seed=seed, degree=degree, **extra(name))
            except PerturbationNotApplicable:
                continue
            check_result(text, result, level="answer" if name == "random_answer" else rule.level)


def test_apply_edits_checks_its_input() -> None:
    assert apply_edits("abc", [Edit(2, 3, "c", "C"), Edit(0, 1, "a", "")]) == "bC"
    with pytest.raises(ValueError, match="overlapping"):
        apply_edits("abc", [Edit(0, 2, "ab", ""), Edit(1, 3, "bc", "")])
    with pytest.raises(ValueError, match="does not match"):
        apply_edits("abc", [Edit(0, 1, "x", "")])
