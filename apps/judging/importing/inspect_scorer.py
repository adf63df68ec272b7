"""Inspect AI scorers described in a small YAML/JSON file (no Python): ``model_graded_qa`` or
``model_graded_fact`` with their ``template``, ``instructions``, ``grade_pattern``,
``partial_credit``, grader ``model`` (+ ``base_url``, ``api_key_env``) and an optional fixed
``criterion`` (docs/import.md). One description, one judge.

Inspect fills ``{question}`` with the sample's input (Discern: ``{{source}}``), ``{answer}``
with the output judged (``{{text}}``) and ``{criterion}`` with the sample's target: the fixed
criterion when the description gives one, else the item's original text (``{{reference}}``).
"""

from __future__ import annotations

import string
from typing import Any

from apps.judging.importing import inspect_prompts as prompts
from apps.judging.importing.mapping import ImportedJudge, ImportRefused, MappedField
from apps.judging.importing.naming import name_judges, named
from apps.judging.importing.providers import inspect_model
from apps.judging.parsers import grade_pattern_problem
from apps.judging.prompt_template import PLACEHOLDER

KEYS = frozenset(
    {
        "scorer",
        "name",
        "template",
        "instructions",
        "grade_pattern",
        "partial_credit",
        "model",
        "base_url",
        "api_key_env",
        "criterion",
        "temperature",
        "max_tokens",
    }
)
FILLED = {"question": "{{source}}", "answer": "{{text}}"}
FILLED_ROWS = (
    ("(Inspect's input)", "{{source}}", "{question}: the item's source"),
    ("(Inspect's output)", "{{text}}", "{answer}: the evaluated text"),
)
MAX_TOKENS = 1024


def judge_of(description: dict[str, Any], stem: str) -> ImportedJudge:
    if unknown := sorted(set(description) - KEYS):
        raise ImportRefused([f"{key}: not a field of a scorer description" for key in unknown])
    scorer = description.get("scorer")
    if scorer not in prompts.TEMPLATES:
        raise ImportRefused(
            [f'scorer: "{scorer}" is not one Discern imports ({", ".join(prompts.TEMPLATES)})']
        )
    model = inspect_model(description)
    rows = [MappedField("scorer", "strategy.prompt_template", scorer, "Inspect's template")]
    instructions = _instructions(description, rows)
    criterion = _criterion(description, rows)
    template = _template(description, scorer, rows)
    prompt = _filled(template, {"criterion": criterion, "instructions": instructions})
    pattern = _pattern(description, rows)
    judge = ImportedJudge(
        name=str(scorer),
        origin="scorer",
        endpoint=model.endpoint,
        strategy={
            "max_tokens": MAX_TOKENS,
            "family": "reference" if criterion == "{{reference}}" else "single",
            "description": f"Imported from an Inspect AI scorer description ({scorer}).",
            "source": f"Inspect AI {scorer}",
            "prompt_template": prompt,
            "parser": "grade_letter",
            "grade_pattern": pattern,
            "scale_min": 0,
            "scale_max": 1,
        }
        | model.strategy,
        rows=rows + model.rows,
    )
    name = description.get("name")
    if isinstance(name, str) and name.strip():
        judge.rows.append(MappedField("name", "judge.name", name))
        return named(judge, name)
    return name_judges([judge], stem)[0]


def _instructions(description: dict[str, Any], rows: list[MappedField]) -> str:
    given = description.get("instructions")
    partial = description.get("partial_credit", False)
    if not isinstance(partial, bool):
        raise ImportRefused(["partial_credit: true or false"])
    if given is not None:
        text = _text(given, "instructions")
        rows.append(MappedField("instructions", "strategy.prompt_template", text, "{instructions}"))
        if "partial_credit" in description:
            rows.append(
                MappedField(
                    "partial_credit",
                    "",
                    str(partial).lower(),
                    "not used: your instructions say which grades to give (as in Inspect)",
                )
            )
        return text
    words = "with" if partial else "without"
    rows.append(
        MappedField(
            "partial_credit",
            "strategy.prompt_template",
            str(partial).lower(),
            f"Inspect's default instructions, {words} P (partial, 0.5)",
        )
    )
    return prompts.default_instructions(partial)


def _criterion(description: dict[str, Any], rows: list[MappedField]) -> str:
    given = description.get("criterion")
    if given is None:
        rows.append(
            MappedField(
                "(Inspect's target)",
                "strategy.prompt_template",
                "{{reference}}",
                "{criterion}: the item's original text, as the reference",
            )
        )
        return "{{reference}}"
    text = _text(given, "criterion")
    rows.append(MappedField("criterion", "strategy.prompt_template", text, "{criterion}"))
    return text


def _template(description: dict[str, Any], scorer: str, rows: list[MappedField]) -> str:
    given = description.get("template")
    for source, value, note in FILLED_ROWS:
        rows.append(MappedField(source, "strategy.prompt_template", value, note))
    if given is None:
        return prompts.TEMPLATES[scorer]
    rows.append(MappedField("template", "strategy.prompt_template", _text(given, "template")))
    return str(given)


def _filled(template: str, values: dict[str, str]) -> str:
    """Inspect's format string in Discern's words: its four variables filled or mapped, its
    literal text kept (a literal that reads as a Discern placeholder is refused)."""
    parts = []
    try:
        pieces = list(string.Formatter().parse(template))
    except ValueError as error:
        raise ImportRefused([f"template: not a Python format string: {error}"]) from None
    for literal, field, spec, conversion in pieces:
        _literal(literal, "template")
        parts.append(literal)
        if field is None:
            continue
        if spec or conversion or field not in {*FILLED, *values}:
            raise ImportRefused(
                [
                    f"template: {{{field}}} has no Discern equivalent (Discern fills "
                    "{question}, {answer}, {criterion} and {instructions})"
                ]
            )
        parts.append(FILLED.get(field) or values[field])
    return "".join(parts)


def _pattern(description: dict[str, Any], rows: list[MappedField]) -> str:
    pattern = description.get("grade_pattern")
    if pattern is None:
        rows.append(MappedField("grade_pattern", "strategy.grade_pattern", "", "Inspect's default"))
        return ""
    pattern = _text(pattern, "grade_pattern")
    if problem := grade_pattern_problem(pattern):
        raise ImportRefused([f"grade_pattern: {problem}"])
    rows.append(MappedField("grade_pattern", "strategy.grade_pattern", pattern, "C 1, P 0.5, I 0"))
    return pattern


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ImportRefused([f"{where}: text"])
    if where != "template":
        _literal(value, where)
    return value


def _literal(text: str, where: str) -> None:
    if match := PLACEHOLDER.search(text):
        raise ImportRefused([f"{where}: {match.group(0)} would be read as a Discern placeholder"])
