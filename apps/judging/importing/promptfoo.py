"""promptfoo configs: each distinct model-graded assertion (``llm-rubric``, ``g-eval``,
``model-graded-closedqa``) with its grading provider makes one judge (docs/import.md).

The grading provider is promptfoo's: the assertion's ``provider``, else its test's
``options.provider``, else ``defaultTest.options.provider``. A rubric's nunjucks variables
are promptfoo's test variables: ``{{output}}`` is the evaluated text (``{{text}}``); any other
has no Discern equivalent and is refused, named.
"""

from __future__ import annotations

import json
import re
from typing import Any

from apps.judging.importing import promptfoo_prompts as prompts
from apps.judging.importing.mapping import ImportedJudge, ImportRefused, MappedField
from apps.judging.importing.naming import name_judges
from apps.judging.importing.providers import promptfoo_model

IMPORTED = ("llm-rubric", "g-eval", "model-graded-closedqa")
ASSERTION_KEYS = frozenset({"type", "value", "threshold", "provider", "metric", "weight"})
NUNJUCKS = re.compile(r"\{\{(.*?)\}\}|\{%.*?%\}|\{#.*?#\}", re.DOTALL)
OUTPUT = re.compile(r"\s*output\s*")
THRESHOLD_NOTE = "kept in the strategy's description; Discern compares scores, not pass/fail"
MAX_TOKENS = 1024
UNREAD_NOTE = (
    "not imported: what promptfoo asks the models under test; Discern judges the texts of "
    "your datasets"
)


def judges_of(config: dict[str, Any], stem: str) -> list[ImportedJudge]:
    """The judges of a promptfoo config, named after its ``description`` (else the file)."""
    tests = config.get("tests") or []
    problems: list[str] = []
    judges: dict[str, ImportedJudge] = {}
    for where, assertion, provider in _assertions(config):
        try:
            judge = _judge(where, assertion, provider)
        except ImportRefused as refused:
            problems += refused.problems
            continue
        asked = {k: v for k, v in judge.strategy.items() if k != "description"}
        key = json.dumps([judge.endpoint, asked], sort_keys=True, default=str)
        if key in judges:
            same = judges[key]
            same.rows.append(MappedField(where, "", "", f"the same judge as {same.origin}"))
        else:
            judges[key] = judge
    if problems:
        raise ImportRefused(problems)
    if not judges:
        raise ImportRefused(
            [f"tests[].assert: no model-graded assertion to import ({', '.join(IMPORTED)})"]
        )
    unread: list[str] = [n for n in ("prompts", "providers", "scenarios") if n in config]
    unread += ["tests[].vars"] if any(isinstance(t, dict) and "vars" in t for t in tests) else []
    for judge in judges.values():
        if unread:
            judge.rows.append(MappedField(", ".join(unread), "", "", UNREAD_NOTE))
    description = config.get("description")
    prefix = description if isinstance(description, str) and description.strip() else stem
    return name_judges(list(judges.values()), prefix.strip())


def _assertions(config: dict[str, Any]) -> list[tuple[str, Any, tuple[str, Any] | None]]:
    """Every assertion with where it is and its grading provider (where it is set, value)."""
    default = _mapping(config.get("defaultTest"), "defaultTest")
    tests = config.get("tests") or []
    if not isinstance(tests, list):
        raise ImportRefused(
            ["tests: a list of tests written in the file (files of tests are not followed)"]
        )
    default_provider = _provider_option(default, "defaultTest")
    found = [
        (f"defaultTest.assert[{i}]", a, default_provider)
        for i, a in _listed(default, "defaultTest")
    ]
    for number, test in enumerate(tests):
        where = f"tests[{number}]"
        test = _mapping(test, where)
        provider = _provider_option(test, where) or default_provider
        found += [(f"{where}.assert[{i}]", a, provider) for i, a in _listed(test, where)]
    return [
        (where, assertion, _provider_of(where, assertion) or provider)
        for where, assertion, provider in found
    ]


def _mapping(value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ImportRefused([f"{where}: a mapping of fields written in the file"])
    return value


def _listed(test: dict[str, Any], where: str) -> list[tuple[int, Any]]:
    assertions = test.get("assert") or []
    if not isinstance(assertions, list):
        raise ImportRefused([f"{where}.assert: a list of assertions"])
    return list(enumerate(assertions))


def _provider_option(test: dict[str, Any], where: str) -> tuple[str, Any] | None:
    options = _mapping(test.get("options"), f"{where}.options")
    for name in ("rubricPrompt", "transform"):
        if name in options:
            raise ImportRefused(
                [f"{where}.options.{name}: not imported (Discern asks promptfoo's own prompt)"]
            )
    if options.get("provider") is None:
        return None
    return f"{where}.options.provider", options["provider"]


def _provider_of(where: str, assertion: Any) -> tuple[str, Any] | None:
    if isinstance(assertion, dict) and assertion.get("provider") is not None:
        return f"{where}.provider", assertion["provider"]
    return None


def _judge(where: str, assertion: Any, provider: tuple[str, Any] | None) -> ImportedJudge:
    if not isinstance(assertion, dict):
        raise ImportRefused([f"{where}: an assertion is a mapping with a type"])
    kind = assertion.get("type")
    if kind not in IMPORTED:
        raise ImportRefused(
            [
                f'{where}.type: "{kind}" is not a model-graded assertion Discern can import '
                f"(it imports {', '.join(IMPORTED)})"
            ]
        )
    if unknown := sorted(set(assertion) - ASSERTION_KEYS):
        raise ImportRefused([f"{where}.{key}: not imported" for key in unknown])
    if provider is None:
        raise ImportRefused(
            [
                f"{where}.provider: no grading provider; promptfoo's default grader depends on "
                "the keys in its environment: name one in the assertion's provider or "
                "defaultTest.options.provider"
            ]
        )
    model = promptfoo_model(provider[1], provider[0])
    text, rows = _value(where, assertion.get("value"))
    judge = ImportedJudge(
        name=str(assertion.get("metric") or kind),
        origin=where,
        endpoint=model.endpoint,
        strategy={"max_tokens": MAX_TOKENS} | _strategy(kind, text) | model.strategy,
    )
    judge.rows = [*_kind_rows(where, kind), *rows, *model.rows, *_extra_rows(where, assertion)]
    judge.strategy["description"] = _description(where, kind, assertion)
    return judge


def _value(where: str, value: Any) -> tuple[str, list[MappedField]]:
    """The rubric or criteria, nunjucks variables mapped; refused when one has no equivalent."""
    if not isinstance(value, str) or not value.strip():
        raise ImportRefused([f"{where}.value: the rubric or criteria, as text"])
    if value.startswith("file://"):
        raise ImportRefused([f"{where}.value: {value} is not followed: write the text in"])
    rows = [MappedField(f"{where}.value", "strategy.prompt_template", value, "the rubric")]

    def mapped(match: re.Match[str]) -> str:
        if match.group(1) is not None and OUTPUT.fullmatch(match.group(1)):
            return "{{text}}"
        raise ImportRefused(
            [
                f"{where}.value: {match.group(0)} has no Discern equivalent (a rubric may use "
                "{{output}}, the evaluated text)"
            ]
        )

    text = NUNJUCKS.sub(mapped, value)
    if text != value:
        rows.append(MappedField(f"{where}.value", "", "{{output}}", "becomes {{text}}"))
    if "{{" in text.replace("{{text}}", "") or "{%" in text:
        raise ImportRefused([f"{where}.value: an unclosed {{{{ or {{% (a nunjucks tag)"])
    return text, rows


def _strategy(kind: str, text: str) -> dict[str, Any]:
    if kind == "llm-rubric":
        return {
            "family": "single",
            "source": "promptfoo llm-rubric (DEFAULT_GRADING_PROMPT)",
            "system_prompt": prompts.RUBRIC_SYSTEM,
            "prompt_template": prompts.rubric_user(text),
            "parser": "json_pass_score",
            "scale_min": 0,
            "scale_max": 1,
        }
    if kind == "model-graded-closedqa":
        return {
            "family": "single",
            "source": "promptfoo model-graded-closedqa (OPENAI_CLOSED_QA_PROMPT)",
            "prompt_template": prompts.closed_qa(text),
            "parser": "grade_letter",
            "grade_pattern": prompts.CLOSED_QA_PATTERN,
            "scale_min": 0,
            "scale_max": 1,
        }
    return {
        "family": "geval",
        "source": "promptfoo g-eval (GEVAL_PROMPT_EVALUATE, steps fixed)",
        "prompt_template": prompts.geval(text),
        "parser": "json_pass_score",
        "scale_min": 0,
        "scale_max": prompts.GEVAL_MAX_SCORE,
    }


def _kind_rows(where: str, kind: str) -> list[MappedField]:
    source = f"{where}.type"
    if kind == "llm-rubric":
        return [
            MappedField(source, "strategy.system_prompt", kind, "promptfoo's grading prompt"),
            MappedField(source, "strategy.parser", "json_pass_score", "score 0-1 (else pass)"),
            MappedField("(promptfoo's output)", "strategy.prompt_template", "{{text}}"),
        ]
    if kind == "model-graded-closedqa":
        return [
            MappedField(
                source,
                "strategy.prompt_template",
                kind,
                "promptfoo's closed-QA prompt, sent as the user message (promptfoo sends it "
                "as a system message)",
            ),
            MappedField(source, "strategy.parser", "grade_letter", "a last Y is 1, N is 0"),
            MappedField("(promptfoo's input)", "strategy.prompt_template", "{{source}}"),
            MappedField("(promptfoo's completion)", "strategy.prompt_template", "{{text}}"),
        ]
    return [
        MappedField(source, "strategy.prompt_template", kind, "promptfoo's g-eval prompt"),
        MappedField(
            "(g-eval's evaluation steps)",
            "strategy.prompt_template",
            " / ".join(prompts.GEVAL_STEPS),
            "promptfoo asks the model to write these first, in a call of its own; they are "
            "fixed here, as Discern asks once",
        ),
        MappedField(source, "strategy.parser", "json_pass_score", "score 0-10 (promptfoo: /10)"),
        MappedField("(promptfoo's input)", "strategy.prompt_template", "{{source}}"),
        MappedField("(promptfoo's output)", "strategy.prompt_template", "{{text}}"),
    ]


def _extra_rows(where: str, assertion: dict[str, Any]) -> list[MappedField]:
    rows = []
    if "threshold" in assertion:
        value, source = str(assertion["threshold"]), f"{where}.threshold"
        rows.append(MappedField(source, "strategy.description", value, THRESHOLD_NOTE))
    if "metric" in assertion:
        rows.append(MappedField(f"{where}.metric", "judge.name", str(assertion["metric"])))
    if "weight" in assertion:
        rows.append(
            MappedField(
                f"{where}.weight", "", str(assertion["weight"]), "not used: no combined score"
            )
        )
    return rows


def _description(where: str, kind: str, assertion: dict[str, Any]) -> str:
    text = f"Imported from a promptfoo config ({where}, {kind})."
    if "threshold" in assertion:
        text += (
            f" promptfoo's threshold: {assertion['threshold']} (a pass mark; Discern keeps "
            "the score itself and compares scores, not pass/fail)."
        )
    return text
