"""The messages of one judge call: a strategy's template filled for one text and quality.

The "quality" of a call is a criterion (an aspect described in words, methods §1) or a task
metric (methods §4, §5). Criterion texts may hold ``{T}`` (the evaluated text's name) and
``{S}`` (the source's name, "source text"), as in Hu et al.'s released criteria.

Expert ratings for the misleading-cue prompt (methods §5) come from the source item's metadata:
``metadata["expert_ratings"][key] = [r1, r2, r3]`` where ``key`` is the metric's slug, the
criterion's key or the aspect's slug. They rate the original, so only originals can be judged
with that prompt.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from apps.catalog.models import Criterion, Metric, Task
from apps.corpus.models import Perturbation, SourceItem
from apps.judging.misleading_cue import misleading_rating
from apps.judging.models import JudgeCall, Strategy
from apps.judging.prompt_template import placeholders, render

SOURCE_NAME = "source text"


class PromptError(ValueError):
    """The call cannot be asked with this strategy (e.g. no expert ratings to mislead with)."""


def _task(item: SourceItem) -> Task | None:
    return item.task or item.dataset.task


def quality_of(
    criterion: Criterion | None, metric: Metric | None, text_name: str
) -> tuple[str, str]:
    """(name, description) of what is judged."""
    if criterion is not None:
        described = criterion.render(text_name).replace("{S}", SOURCE_NAME)
        return criterion.aspect.name, described
    if metric is not None:
        return metric.name, metric.definition or metric.name
    return "", ""


def expert_ratings(
    item: SourceItem, criterion: Criterion | None, metric: Metric | None
) -> list[float] | None:
    table = (item.metadata or {}).get("expert_ratings")
    if not isinstance(table, dict):
        return None
    keys = []
    if metric is not None:
        keys.append(metric.slug)
    if criterion is not None:
        keys += [criterion.key, criterion.aspect.slug]
    for key in keys:
        ratings = table.get(key)
        if isinstance(ratings, list) and len(ratings) == 3:
            return [float(r) for r in ratings]
    return None


def format_examples(examples: Sequence[dict[str, Any]], text_name: str) -> str:
    blocks = []
    for number, example in enumerate(examples, start=1):
        lines = [f"Example {number}"]
        if example.get("source"):
            lines.append(f"Source: {example['source']}")
        lines.append(f"{text_name.capitalize()}: {example.get('text', '')}")
        lines.append(f"Score: {example.get('score', '')}")
        if example.get("why"):
            lines.append(f"Why: {example['why']}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def call_values(
    strategy: Strategy,
    *,
    item: SourceItem,
    perturbation: Perturbation | None,
    criterion: Criterion | None,
    metric: Metric | None,
    original_first: bool | None,
) -> dict[str, str]:
    """Every placeholder's value for this call (only those the template uses are computed)."""
    used = placeholders(strategy.prompt_template) | placeholders(strategy.system_prompt)
    task = _task(item)
    text_name = task.text_name if task else "text"
    quality, description = quality_of(criterion, metric, text_name)
    text = perturbation.text if perturbation is not None else item.original
    values = {
        "task": task.name if task else "",
        "task_description": task.description if task else "",
        "text_name": text_name,
        "source": item.source,
        "text": text,
        "reference": item.original,
        "quality": quality,
        "quality_description": description,
        "scale_min": str(strategy.scale_min),
        "scale_max": str(strategy.scale_max),
    }
    if used & {"text_a", "text_b"}:
        if perturbation is None or original_first is None:
            raise PromptError("a pairwise prompt needs a perturbation and an order")
        first, second = (item.original, text) if original_first else (text, item.original)
        values |= {"text_a": first, "text_b": second}
    if "examples" in used:
        values["examples"] = format_examples(strategy.examples or [], text_name)
    if "expert_rating" in used:
        values["expert_rating"] = _misleading(strategy, item, perturbation, criterion, metric)
    return values


def _misleading(
    strategy: Strategy,
    item: SourceItem,
    perturbation: Perturbation | None,
    criterion: Criterion | None,
    metric: Metric | None,
) -> str:
    if perturbation is not None:
        raise PromptError("expert ratings rate the original: the misleading cue needs originals")
    ratings = expert_ratings(item, criterion, metric)
    if ratings is None:
        raise PromptError("no three expert ratings in the item's metadata['expert_ratings']")
    r1, r2, r3 = ratings
    try:
        pr = misleading_rating(r1, r2, r3, strategy.scale_min, strategy.scale_max)
    except ValueError as exc:
        raise PromptError(str(exc)) from exc
    return f"{pr:g}"


def call_messages(strategy: Strategy, call: JudgeCall) -> list[dict[str, str]]:
    """The chat messages of one call (system message only when the strategy has one)."""
    values = call_values(
        strategy,
        item=call.item,
        perturbation=call.perturbation,
        criterion=call.criterion,
        metric=call.metric,
        original_first=call.original_first,
    )
    messages = []
    if strategy.system_prompt.strip():
        messages.append({"role": "system", "content": render(strategy.system_prompt, values)})
    messages.append({"role": "user", "content": render(strategy.prompt_template, values)})
    return messages
