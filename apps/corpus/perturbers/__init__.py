"""Rule-based perturbation kinds as pure, seedable functions (no Django, no I/O).

Usage::

    from apps.corpus.perturbers import RULES, apply_rule, preset_parameters

    params = preset_parameters("char_deletion", "minor", text)   # {"k": 10}
    result = RULES["char_deletion"](text, seed=7, **params)      # PerturbResult
    result.text, result.params, result.edits

    apply_rule("random_ending", text, seed=7, pool=other_texts)  # presets + run in one call

Every rule raises :class:`PerturbationNotApplicable` instead of returning an unchanged text.
"""

from .base import Edit, PerturbationNotApplicable, PerturbResult, Rule, apply_edits
from .presets import DEGREES, apply_rule, degrees_of, preset_parameters
from .registry import RULES, get_rule

__all__ = [
    "DEGREES",
    "RULES",
    "Edit",
    "PerturbResult",
    "PerturbationNotApplicable",
    "Rule",
    "apply_edits",
    "apply_rule",
    "degrees_of",
    "get_rule",
    "preset_parameters",
]
