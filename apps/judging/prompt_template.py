"""The prompt template language of strategies: ``{{name}}`` placeholders, nothing else.

Values are inserted in one pass, so a text that itself contains ``{{text}}`` or ``{T}`` is
never expanded again. Unknown placeholders are an error when the strategy is saved.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache

PLACEHOLDER = re.compile(r"\{\{\s*([a-z_]+)\s*\}\}")

#: Every placeholder a template may use, and what it stands for.
PLACEHOLDERS: dict[str, str] = {
    "task": "the task's name, e.g. Summarization",
    "task_description": "the task's description",
    "text_name": 'what the evaluated text is called, e.g. "summary"',
    "source": "the item's source, context or instruction (may be empty)",
    "text": "the evaluated text: the original or a perturbed text",
    "reference": "the item's original text, as a reference answer",
    "text_a": "pairwise: the text shown first",
    "text_b": "pairwise: the text shown second",
    "quality": "the criterion's aspect name or the task metric's name",
    "quality_description": "the criterion's description (placeholders filled) or the metric's "
    "definition",
    "scale_min": "the lowest score of the strategy's scale",
    "scale_max": "the highest score of the strategy's scale",
    "examples": "few-shot: the strategy's examples, one block each",
    "expert_rating": "misleading cue: the rating PR claimed to come from a human expert",
}
PAIRWISE_ONLY = frozenset({"text_a", "text_b"})
SINGLE_ONLY = frozenset({"text"})


class TemplateError(ValueError):
    pass


@lru_cache(maxsize=256)
def placeholders(template: str) -> frozenset[str]:
    return frozenset(PLACEHOLDER.findall(template))


def template_problems(template: str, *, pairwise: bool) -> list[str]:
    """Why this template cannot be used (empty list: it can)."""
    used = placeholders(template)
    problems = [f"unknown placeholder {{{{{name}}}}}" for name in sorted(used - set(PLACEHOLDERS))]
    if pairwise:
        missing = PAIRWISE_ONLY - used
        if missing:
            problems.append("a pairwise template needs {{text_a}} and {{text_b}}")
        if used & SINGLE_ONLY:
            problems.append("a pairwise template shows {{text_a}} and {{text_b}}, not {{text}}")
    else:
        if "text" not in used:
            problems.append("the template must show the evaluated text: {{text}}")
        if used & PAIRWISE_ONLY:
            problems.append("{{text_a}} / {{text_b}} need the pairwise parser")
    return problems


def render(template: str, values: Mapping[str, str]) -> str:
    """Fill every placeholder; a placeholder without a value is a TemplateError."""

    def fill(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in values:
            raise TemplateError(f"no value for {{{{{name}}}}}")
        return values[name]

    return PLACEHOLDER.sub(fill, template)
