"""Minor / major parameters for the graded rules, scaled to the length of the text.

The scaling rule
================

Let ``W`` be the number of (unprotected) words of the text, ``S`` its number of sentences, and
``round`` round half up. For the count rules::

    minor = clamp(round(W / divisor), floor, minor_cap)
    major = min(5 * minor, major_cap)

    rule                 divisor  floor  minor_cap  major_cap   feasibility limit
    char_deletion            6      5       100        500       half the alphanumerics
    typos                    6      5       100        500       ASCII words (one typo each)
    spelling_mistake        12      2        50        250       words of 3+ letters
    word_exchange           25      1        20        100       disjoint adjacent pairs
    word_span_deletion      14      2        20        100       min(W // 2, longest run)

This reproduces the DHP settings (Wang, Yuan et al. 2024, Table 2): SummEval summaries (58 words)
get 10 / 50 character deletions and typos, SumPubMed (115 words) 19 / 95 (paper: 20 / 100),
Answer Equivalence answers (24 words) 5 / 25, WMT translations (71 words) 12 / 60 (paper: 10 / 50)
and 5 / 25 deleted words, Story Cloze endings (7 words) 5. Major is always 5 x minor, as in every
DHP pair. The caps keep long answers (FBI: median 330 words) at a degradation a reader still
sees as local.

Then both values are clipped to the feasibility limit of the text. A preset raises
:class:`PerturbationNotApplicable` when the clipped value is below 1, and, for ``major``, when
the text has fewer than ``MAJOR_MIN_WORDS`` (15) words - DHP only grades texts "sufficiently
long" (Story Cloze, 7 words, has no major; Answer Equivalence, 24 words, has) - or when the
clipped major is not larger than the clipped minor.

Sentence rules: ``sentence_reordering`` minor ``k=2`` (S >= 2), major ``k="all"`` (S >= 3);
``sentence_deletion`` minor ``k=1`` (S >= 2), major ``k=max(2, round(S / 3))`` clipped to
``S - 1`` (S >= 3).

Ungraded rules (``sentence_exchange``, ``random_ending``, ``random_answer``, ``wrong_ending``)
take ``degree=None`` and have no length parameter; the caller adds ``pool`` or
``wrong_ending``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

from .base import PerturbationNotApplicable, PerturbResult
from .character import spelling_targets, typo_targets
from .registry import get_rule
from .segmentation import segment
from .word import exchange_pairs, longest_run, max_disjoint_pairs

__all__ = [
    "COUNT_PRESETS",
    "DEGREES",
    "MAJOR_FACTOR",
    "MAJOR_MIN_WORDS",
    "CountPreset",
    "apply_rule",
    "degrees_of",
    "preset_parameters",
]

DEGREES = ("minor", "major")
MAJOR_FACTOR = 5
MAJOR_MIN_WORDS = 15


class CountPreset(NamedTuple):
    divisor: float
    floor: int
    minor_cap: int
    major_cap: int
    limit: Callable[[str], int]
    limit_doc: str


def _half_alnum(text: str) -> int:
    return len(segment(text).alnum_positions) // 2


def _pairs(text: str) -> int:
    return len(max_disjoint_pairs(exchange_pairs(text)))


def _span_limit(text: str) -> int:
    return min(len(segment(text).words) // 2, longest_run(text))


COUNT_PRESETS: dict[str, CountPreset] = {
    "char_deletion": CountPreset(6, 5, 100, 500, _half_alnum, "half the alphanumerics"),
    "typos": CountPreset(6, 5, 100, 500, lambda t: len(typo_targets(t)), "ASCII words"),
    "spelling_mistake": CountPreset(
        12, 2, 50, 250, lambda t: len(spelling_targets(t)), "words of 3+ letters"
    ),
    "word_exchange": CountPreset(25, 1, 20, 100, _pairs, "disjoint adjacent pairs"),
    "word_span_deletion": CountPreset(14, 2, 20, 100, _span_limit, "min(W // 2, longest run)"),
}


def _round(x: float) -> int:
    return math.floor(x + 0.5)


def degrees_of(rule: str) -> tuple[str | None, ...]:
    """The degrees a rule accepts: ``("minor", "major")`` or ``(None,)``."""
    return DEGREES if get_rule(rule).graded else (None,)


def _count_preset(rule: str, degree: str, text: str) -> dict[str, Any]:
    p = COUNT_PRESETS[rule]
    words = len(segment(text).words)
    minor = min(max(_round(words / p.divisor), p.floor), p.minor_cap)
    limit = p.limit(text)
    minor_k = min(minor, limit)
    if minor_k < 1:
        raise PerturbationNotApplicable(rule, f"text too short: {p.limit_doc} = {limit}")
    if degree == "minor":
        return {"k": minor_k}
    if words < MAJOR_MIN_WORDS:
        raise PerturbationNotApplicable(
            rule, f"text too short for a major degree ({words} < {MAJOR_MIN_WORDS} words)"
        )
    major_k = min(MAJOR_FACTOR * minor, p.major_cap, limit)
    if major_k <= minor_k:
        raise PerturbationNotApplicable(
            rule, f"text too short for a major degree ({p.limit_doc} = {limit})"
        )
    return {"k": major_k}


def _sentence_preset(rule: str, degree: str, text: str) -> dict[str, Any]:
    n = len(segment(text).sentences)
    need = 2 if degree == "minor" else 3
    if n < need:
        raise PerturbationNotApplicable(
            rule, f"the {degree} degree needs at least {need} sentences, the text has {n}"
        )
    if rule == "sentence_reordering":
        return {"k": 2 if degree == "minor" else "all"}
    # sentence_deletion
    return {"k": 1 if degree == "minor" else min(max(2, _round(n / 3)), n - 1)}


def preset_parameters(rule: str, degree: str | None, text: str) -> dict[str, Any]:
    """Parameters of ``rule`` at ``degree`` for ``text`` (see the module docstring).

    Raises ``ValueError`` for a degree the rule does not have (a programming error) and
    :class:`PerturbationNotApplicable` when the text is too short for that degree.
    """
    r = get_rule(rule)
    if not r.graded:
        if degree is not None:
            raise ValueError(f"{rule} has no degrees; pass degree=None")
        return {}
    if degree not in DEGREES:
        raise ValueError(f"{rule}: degree must be one of {DEGREES}, got {degree!r}")
    if rule in COUNT_PRESETS:
        return _count_preset(rule, degree, text)
    return _sentence_preset(rule, degree, text)


def apply_rule(
    rule: str, text: str, *, seed: int, degree: str | None = None, **params: Any
) -> PerturbResult:
    """Run ``rule`` with its preset for ``degree``, explicit ``params`` taking precedence.

    The result's params record the degree.
    """
    merged = {**preset_parameters(rule, degree, text), **params}
    result = get_rule(rule)(text, seed=seed, **merged)
    return PerturbResult(result.text, {**result.params, "degree": degree}, result.edits)
