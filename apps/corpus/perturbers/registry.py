"""RULES: every rule-based perturbation kind by name, with its declared parameters."""

from __future__ import annotations

from .base import Rule
from .character import char_deletion, spelling_mistake, typos
from .sentence import (
    random_answer,
    random_ending,
    sentence_deletion,
    sentence_exchange,
    sentence_reordering,
    wrong_ending,
)
from .word import word_exchange, word_span_deletion

__all__ = ["LEVELS", "RULES", "get_rule"]

LEVELS = ("character", "word", "sentence")

RULES: dict[str, Rule] = {
    r.name: r
    for r in (
        Rule(
            name="char_deletion",
            func=char_deletion,
            params=("k",),
            level="character",
            graded=True,
            source="dhp2024",
            description="Delete k random alphanumeric characters.",
        ),
        Rule(
            name="typos",
            func=typos,
            params=("k",),
            level="character",
            graded=True,
            source="dhp2024",
            description="Add k random typos (the `typo` package), one per word.",
        ),
        Rule(
            name="spelling_mistake",
            func=spelling_mistake,
            params=("k",),
            level="character",
            graded=True,
            source="hu2024",
            aspect="Grammaticality",
            description="Misspell k words (doubled, dropped, swapped letters, wrong vowel).",
        ),
        Rule(
            name="word_exchange",
            func=word_exchange,
            params=("k",),
            level="word",
            graded=True,
            source="hu2024",
            aspect="Grammaticality",
            description="Swap k pairs of adjacent words.",
        ),
        Rule(
            name="word_span_deletion",
            func=word_span_deletion,
            params=("k",),
            level="word",
            graded=True,
            source="dhp2024",
            description="Delete k consecutive words.",
        ),
        Rule(
            name="sentence_exchange",
            func=sentence_exchange,
            params=(),
            level="sentence",
            graded=False,
            source="hu2024",
            aspect="Coherence",
            description="Swap two sentences.",
        ),
        Rule(
            name="sentence_reordering",
            func=sentence_reordering,
            params=("k",),
            level="sentence",
            graded=True,
            source="dhp2024",
            description='Shuffle k sentences (2 minor, "all" major).',
        ),
        Rule(
            name="sentence_deletion",
            func=sentence_deletion,
            params=("k",),
            optional=("k",),
            level="sentence",
            graded=True,
            source="hu2024",
            aspect="Informativeness",
            description="Delete k sentences (1 by default).",
        ),
        Rule(
            name="random_ending",
            func=random_ending,
            params=("pool",),
            needs=("pool",),
            level="sentence",
            graded=False,
            source="dhp2024",
            description="Replace the last sentence by the ending of another item's text.",
        ),
        Rule(
            name="random_answer",
            func=random_answer,
            params=("pool",),
            needs=("pool",),
            level="sentence",
            graded=False,
            source="dhp2024",
            description="Replace the whole text by another item's text.",
        ),
        Rule(
            name="wrong_ending",
            func=wrong_ending,
            params=("wrong_ending",),
            needs=("wrong_ending",),
            level="sentence",
            graded=False,
            source="dhp2024",
            description="Replace the last sentence by a given wrong ending.",
        ),
    )
}


def get_rule(name: str) -> Rule:
    try:
        return RULES[name]
    except KeyError:
        raise KeyError(f"unknown rule {name!r}; known: {sorted(RULES)}") from None
