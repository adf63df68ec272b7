"""The rule baseline (docs/methods.md §6): the product's own rule-based perturbers, drawn at
random and applied to R0, stand in for the generator under the same limits (iterations,
victim-query budget), as the paper's rule baselines did. No trajectory: rules do not learn.

Only rules that need nothing but the text take part (not those taking another item's text
or a given wrong ending). Pure and seeded: the same item and iteration draw the same texts.
"""

from __future__ import annotations

import random
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from apps.corpus.perturbers import RULES, PerturbationNotApplicable, apply_rule, degrees_of

#: (rule, degree) pairs the baseline draws from.
COMBINATIONS: tuple[tuple[str, str | None], ...] = tuple(
    (name, degree)
    for name, rule in sorted(RULES.items())
    if not rule.needs
    for degree in degrees_of(name)
)


@dataclass(frozen=True)
class RuleCandidate:
    text: str
    provenance: dict[str, Any]


def rule_candidates(
    original: str, *, seed: int, wanted: int, tried: Collection[str]
) -> list[RuleCandidate]:
    """Up to ``wanted`` new texts (not in ``tried``, not the original), each one rule applied
    to the original with its own seed; fewer when the rules run out."""
    rng = random.Random(seed)
    order = list(COMBINATIONS)
    rng.shuffle(order)
    made: list[RuleCandidate] = []
    seen = {original, *tried}
    for attempt in range(len(order) * 2):
        if len(made) >= wanted:
            break
        rule, degree = order[attempt % len(order)]
        rule_seed = rng.randrange(2**31)
        try:
            result = apply_rule(rule, original, seed=rule_seed, degree=degree)
        except PerturbationNotApplicable:
            continue
        if result.text in seen:
            continue
        seen.add(result.text)
        made.append(RuleCandidate(result.text, {"rule": rule, **result.provenance()}))
    return made
