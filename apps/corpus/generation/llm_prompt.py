"""Prompts for LLM-made perturbations: chat messages in, a strictly parsed reply out.

Pure Python (stdlib only); no Django imports, so it runs and is tested without settings.

Prompt file
    ``fixtures/perturbation_prompts.json`` maps each ``method: "llm"`` kind slug to::

        {"version": 1,                      # bump when the instruction or examples change
         "instruction": "...",              # what to change, what to keep, how much
         "examples": [                      # 2+ few-shot demonstrations
             {"source": "...",              # optional (question / instruction / context)
              "original": "...", "perturbed": "...", "explanation": "..."}, ...],
         "max_edit_size": 0.8}              # optional; omitted -> the level default in checks.py

    ``load_prompts`` reads and validates it (every problem is reported, not just the first) and
    returns ``{slug: PromptSpec}``.

Messages
    ``build_messages`` returns OpenAI chat messages: a system message with the task, the kind's
    instruction and the required reply format; each example as a user turn (source + original)
    and an assistant turn written in exactly the required format; then the real text as the last
    user turn, laid out like the example turns.

Reply format and parser rules (``parse_generation``)
    The reply must hold the perturbed text between ``<perturbed>`` and ``</perturbed>`` and may
    hold an explanation between ``<explanation>`` and ``</explanation>`` (tag names match
    case-insensitively, with no attributes or inner spaces). Text outside the blocks (chatter,
    markdown code fences around the tags) is ignored. Inside ``<perturbed>``, exactly one
    newline (``\\n`` or ``\\r\\n``) right after the opening tag and one right before the closing
    tag are removed; everything else is kept byte for byte (no stripping of spaces, no removal
    of fences *inside* the block). The parser never guesses; the reply is ``unparsed`` when:

    * it is empty (``REASON_EMPTY_REPLY``) or has no ``<perturbed>`` block at all, e.g. a refusal
      (``REASON_NO_PERTURBED``);
    * it has more than one ``<perturbed>`` opening tag, which includes chatter that quotes the
      tag (``REASON_MULTIPLE_PERTURBED``), or unbalanced / out-of-order tags
      (``REASON_MALFORMED_PERTURBED``);
    * the block contains a tag marker, e.g. the explanation nested inside it
      (``REASON_NESTED_PERTURBED``);
    * the perturbed text is empty or only whitespace (``REASON_EMPTY_TEXT``);
    * it is identical to the original (``REASON_UNCHANGED`` == ``"unchanged"``), or differs from
      it only in whitespace (``REASON_WHITESPACE_ONLY``; almost always a copy-back with a stray
      newline, never a usable perturbation);
    * the explanation block is present but malformed: repeated, unbalanced, or containing a tag
      marker (``REASON_*_EXPLANATION``).

    The explanation is optional: when the reply has no explanation tags at all, the parse still
    succeeds with ``explanation == ""``. The explanation is returned with surrounding whitespace
    stripped (it is shown to annotators, not diffed). When the perturbed block is rejected but a
    well-formed explanation exists, the explanation is still returned for debugging.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

__all__ = [
    "DEFAULT_PROMPTS_PATH",
    "EXPLANATION_CLOSE",
    "EXPLANATION_OPEN",
    "PERTURBED_CLOSE",
    "PERTURBED_OPEN",
    "REASON_EMPTY_REPLY",
    "REASON_EMPTY_TEXT",
    "REASON_MALFORMED_EXPLANATION",
    "REASON_MALFORMED_PERTURBED",
    "REASON_MULTIPLE_EXPLANATION",
    "REASON_MULTIPLE_PERTURBED",
    "REASON_NESTED_EXPLANATION",
    "REASON_NESTED_PERTURBED",
    "REASON_NO_PERTURBED",
    "REASON_UNCHANGED",
    "REASON_WHITESPACE_ONLY",
    "GenerationParse",
    "PromptExample",
    "PromptFileError",
    "PromptSpec",
    "build_messages",
    "contains_tag_marker",
    "format_reply",
    "load_prompts",
    "parse_generation",
]

DEFAULT_PROMPTS_PATH = (
    Path(__file__).resolve().parents[3] / "fixtures" / "perturbation_prompts.json"
)

PERTURBED_OPEN = "<perturbed>"
PERTURBED_CLOSE = "</perturbed>"
EXPLANATION_OPEN = "<explanation>"
EXPLANATION_CLOSE = "</explanation>"

_TAG_MARKER_RE = re.compile(r"</?(?:perturbed|explanation)>", re.IGNORECASE)

REASON_EMPTY_REPLY = "empty reply"
REASON_NO_PERTURBED = "no <perturbed> block in the reply"
REASON_MULTIPLE_PERTURBED = "more than one <perturbed> block"
REASON_MALFORMED_PERTURBED = "malformed <perturbed> tags (unclosed, stray or out of order)"
REASON_NESTED_PERTURBED = "tag marker inside the <perturbed> block"
REASON_EMPTY_TEXT = "empty perturbed text"
REASON_UNCHANGED = "unchanged"
REASON_WHITESPACE_ONLY = "whitespace-only change"
REASON_MULTIPLE_EXPLANATION = "more than one <explanation> block"
REASON_MALFORMED_EXPLANATION = "malformed <explanation> tags (unclosed, stray or out of order)"
REASON_NESTED_EXPLANATION = "tag marker inside the <explanation> block"

_SLUG_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_ENTRY_KEYS = {"version", "instruction", "examples", "max_edit_size"}
_REQUIRED_ENTRY_KEYS = ("version", "instruction", "examples")
_EXAMPLE_KEYS = {"source", "original", "perturbed", "explanation"}
_REQUIRED_EXAMPLE_KEYS = ("original", "perturbed", "explanation")
MIN_EXAMPLES = 2


def contains_tag_marker(text: str) -> bool:
    """True when ``text`` holds one of the four reply tags (any letter case)."""
    return _TAG_MARKER_RE.search(text) is not None


# --------------------------------------------------------------------------- messages


def format_reply(perturbed: str, explanation: str) -> str:
    """A reply in exactly the required format; ``parse_generation`` reads ``perturbed`` back.

    (One exception: a text ending in a lone ``\\r`` loses it, because ``\\r`` + the added
    ``\\n`` reads as one CRLF newline.)
    """
    return (
        f"{PERTURBED_OPEN}\n{perturbed}\n{PERTURBED_CLOSE}\n"
        f"{EXPLANATION_OPEN}\n{explanation}\n{EXPLANATION_CLOSE}"
    )


def _system_message(instruction: str, text_name: str) -> str:
    return (
        "You create controlled test cases for automatic text evaluators. You receive a "
        f"{text_name}, and sometimes the source it was written for, and you rewrite the "
        f"{text_name} according to one perturbation instruction, so that we can check whether "
        "evaluators notice the change.\n"
        "\n"
        "Perturbation instruction:\n"
        f"{instruction}\n"
        "\n"
        "General rules:\n"
        "- Change only what the instruction asks for, and only as much as it says. Copy every "
        f"other part of the {text_name} character for character: the same words, punctuation, "
        "capitalisation, spacing, line breaks and markdown.\n"
        f"- Do not fix mistakes that are already in the {text_name}, and do not shorten, "
        "summarise or extend it unless the instruction says so.\n"
        "- The source, when given, is context only: never change it and never copy it into "
        "your answer.\n"
        f"- The perturbed {text_name} must differ from the original.\n"
        "- Never write the tags below inside the texts themselves.\n"
        "\n"
        "Required output format. Reply with exactly these two blocks and nothing else:\n"
        f"{PERTURBED_OPEN}\n"
        f"the complete perturbed {text_name}, from its first character to its last\n"
        f"{PERTURBED_CLOSE}\n"
        f"{EXPLANATION_OPEN}\n"
        "one or two sentences saying what you changed and where\n"
        f"{EXPLANATION_CLOSE}\n"
        f"Write exactly one {PERTURBED_OPEN} block. Do not wrap the blocks in code fences and "
        "do not add any text before or after them."
    )


def _user_message(original: str, source: str, text_name: str) -> str:
    parts = []
    if source:
        parts.append(f"Source (context only; do not change it):\n<source>\n{source}\n</source>")
    label = text_name[:1].upper() + text_name[1:]
    parts.append(f"{label} to perturb:\n<original>\n{original}\n</original>")
    parts.append(f"Reply with the {PERTURBED_OPEN} block and the {EXPLANATION_OPEN} block only.")
    return "\n\n".join(parts)


def _example_field(example: Mapping[str, Any], key: str, index: int, *, required: bool) -> str:
    value = example.get(key, None if required else "")
    if not isinstance(value, str) or (required and not value.strip()):
        raise ValueError(f"example {index}: {key!r} must be a non-empty string")
    return value


def build_messages(
    *,
    instruction: str,
    examples: Sequence[Mapping[str, Any]],
    original: str,
    source: str = "",
    text_name: str = "text",
) -> list[dict[str, str]]:
    """OpenAI chat messages asking for one perturbation of ``original``.

    ``examples`` are dicts with ``original``, ``perturbed``, ``explanation`` and an optional
    ``source``; each becomes a user turn and an assistant turn in the required format.
    ``text_name`` names the text in the prompt ("summary", "answer", "ending", ...).
    """
    if not instruction.strip():
        raise ValueError("instruction must not be empty")
    if not text_name.strip():
        raise ValueError("text_name must not be empty")
    messages = [{"role": "system", "content": _system_message(instruction.strip(), text_name)}]
    for i, example in enumerate(examples):
        ex_original = _example_field(example, "original", i, required=True)
        ex_perturbed = _example_field(example, "perturbed", i, required=True)
        ex_explanation = _example_field(example, "explanation", i, required=True)
        ex_source = _example_field(example, "source", i, required=False)
        messages.append(
            {"role": "user", "content": _user_message(ex_original, ex_source, text_name)}
        )
        messages.append(
            {"role": "assistant", "content": format_reply(ex_perturbed, ex_explanation)}
        )
    messages.append({"role": "user", "content": _user_message(original, source, text_name)})
    return messages


# --------------------------------------------------------------------------- parsing


@dataclass(frozen=True)
class GenerationParse:
    """What a generator reply yielded: ``text`` is set only when ``status == "parsed"``."""

    status: Literal["parsed", "unparsed"]
    text: str | None
    explanation: str
    reason: str  # "" when parsed

    @property
    def ok(self) -> bool:
        return self.status == "parsed"


def _strip_one_newline(inner: str) -> str:
    for nl in ("\r\n", "\n"):
        if inner.startswith(nl):
            inner = inner[len(nl) :]
            break
    for nl in ("\r\n", "\n"):
        if inner.endswith(nl):
            inner = inner[: -len(nl)]
            break
    return inner


def _block(reply: str, name: str) -> tuple[str | None, str]:
    """Inner text of the single ``<name>`` block: (inner, "") / (None, "") if absent /
    (None, problem) if malformed. ``problem`` is one of "multiple", "malformed", "nested"."""
    opens = list(re.finditer(rf"<{name}>", reply, re.IGNORECASE))
    closes = list(re.finditer(rf"</{name}>", reply, re.IGNORECASE))
    if not opens and not closes:
        return None, ""
    if len(opens) > 1:
        return None, "multiple"
    if len(opens) != 1 or len(closes) != 1 or closes[0].start() < opens[0].end():
        return None, "malformed"
    inner = reply[opens[0].end() : closes[0].start()]
    if contains_tag_marker(inner):
        return None, "nested"
    return inner, ""


_PERTURBED_PROBLEMS = {
    "multiple": REASON_MULTIPLE_PERTURBED,
    "malformed": REASON_MALFORMED_PERTURBED,
    "nested": REASON_NESTED_PERTURBED,
}
_EXPLANATION_PROBLEMS = {
    "multiple": REASON_MULTIPLE_EXPLANATION,
    "malformed": REASON_MALFORMED_EXPLANATION,
    "nested": REASON_NESTED_EXPLANATION,
}


def _unparsed(reason: str, explanation: str = "") -> GenerationParse:
    return GenerationParse(status="unparsed", text=None, explanation=explanation, reason=reason)


def parse_generation(reply: str, original: str) -> GenerationParse:
    """Read the perturbed text and explanation out of a generator reply (rules: module doc)."""
    if not reply.strip():
        return _unparsed(REASON_EMPTY_REPLY)

    explanation_inner, explanation_problem = _block(reply, "explanation")
    explanation = (explanation_inner or "").strip()

    inner, problem = _block(reply, "perturbed")
    if problem:
        return _unparsed(_PERTURBED_PROBLEMS[problem], explanation)
    if inner is None:
        return _unparsed(REASON_NO_PERTURBED, explanation)
    if explanation_problem:
        return _unparsed(_EXPLANATION_PROBLEMS[explanation_problem])

    text = _strip_one_newline(inner)
    if not text.strip():
        return _unparsed(REASON_EMPTY_TEXT, explanation)
    if text == original:
        return _unparsed(REASON_UNCHANGED, explanation)
    if text.split() == original.split():
        return _unparsed(REASON_WHITESPACE_ONLY, explanation)
    return GenerationParse(status="parsed", text=text, explanation=explanation, reason="")


# --------------------------------------------------------------------------- prompt file


class PromptFileError(ValueError):
    """The prompt file is unreadable or invalid; ``errors`` lists every problem found."""

    def __init__(self, path: str | Path, errors: list[str]):
        self.path = str(path)
        self.errors = errors
        super().__init__(f"{path}: " + "; ".join(errors))


@dataclass(frozen=True)
class PromptExample:
    original: str
    perturbed: str
    explanation: str
    source: str = ""

    def as_dict(self) -> dict[str, str]:
        return {
            "source": self.source,
            "original": self.original,
            "perturbed": self.perturbed,
            "explanation": self.explanation,
        }


@dataclass(frozen=True)
class PromptSpec:
    """One kind's generation prompt. ``max_edit_size`` None means: use the level default."""

    slug: str
    version: int
    instruction: str
    examples: tuple[PromptExample, ...]
    max_edit_size: float | None = None

    def example_dicts(self) -> list[dict[str, str]]:
        return [example.as_dict() for example in self.examples]

    def build_messages(
        self, original: str, *, source: str = "", text_name: str = "text"
    ) -> list[dict[str, str]]:
        return build_messages(
            instruction=self.instruction,
            examples=self.example_dicts(),
            original=original,
            source=source,
            text_name=text_name,
        )


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key!r}")
        out[key] = value
    return out


def _check_example(where: str, example: Any, errors: list[str]) -> PromptExample | None:
    if not isinstance(example, dict):
        errors.append(f"{where}: must be an object")
        return None
    ok = True
    for key in sorted(set(example) - _EXAMPLE_KEYS):
        errors.append(f"{where}: unknown field {key!r}")
        ok = False
    for key in _REQUIRED_EXAMPLE_KEYS:
        value = example.get(key)
        if not isinstance(value, str) or not value.strip():
            errors.append(f"{where}: {key!r} must be a non-empty string")
            ok = False
    source = example.get("source", "")
    if not isinstance(source, str):
        errors.append(f"{where}: 'source' must be a string")
        ok = False
    if not ok:
        return None
    for key in ("source", *_REQUIRED_EXAMPLE_KEYS):
        if contains_tag_marker(example.get(key, "")):
            errors.append(f"{where}: {key!r} contains a reply tag marker")
            ok = False
    if not ok:
        return None
    if example["perturbed"] == example["original"]:
        errors.append(f"{where}: 'perturbed' is identical to 'original'")
        return None
    # The example is shown to the model as the model's own reply: it must be a reply that
    # the parser accepts and reads back unchanged.
    parsed = parse_generation(
        format_reply(example["perturbed"], example["explanation"]), example["original"]
    )
    if parsed.text != example["perturbed"]:
        errors.append(f"{where}: the example reply does not parse back ({parsed.reason})")
        return None
    return PromptExample(
        original=example["original"],
        perturbed=example["perturbed"],
        explanation=example["explanation"],
        source=source,
    )


def _check_entry(slug: str, entry: Any, errors: list[str]) -> PromptSpec | None:
    where = f"{slug!r}"
    if not _SLUG_RE.match(slug):
        errors.append(f"{where}: not a valid kind slug")
    if not isinstance(entry, dict):
        errors.append(f"{where}: entry must be an object")
        return None
    n_errors = len(errors)
    for key in sorted(set(entry) - _ENTRY_KEYS):
        errors.append(f"{where}: unknown field {key!r}")
    for key in _REQUIRED_ENTRY_KEYS:
        if key not in entry:
            errors.append(f"{where}: missing field {key!r}")
    version = entry.get("version")
    if "version" in entry and (
        not isinstance(version, int) or isinstance(version, bool) or version < 1
    ):
        errors.append(f"{where}: 'version' must be an integer >= 1")
    instruction = entry.get("instruction")
    if "instruction" in entry and (not isinstance(instruction, str) or not instruction.strip()):
        errors.append(f"{where}: 'instruction' must be a non-empty string")
    max_edit = entry.get("max_edit_size")
    if "max_edit_size" in entry and (
        not isinstance(max_edit, int | float)
        or isinstance(max_edit, bool)
        or not math.isfinite(max_edit)
        or max_edit <= 0
    ):
        errors.append(f"{where}: 'max_edit_size' must be a positive number")
    raw_examples = entry.get("examples")
    examples: list[PromptExample] = []
    if "examples" in entry:
        if not isinstance(raw_examples, list):
            errors.append(f"{where}: 'examples' must be a list")
        else:
            if len(raw_examples) < MIN_EXAMPLES:
                errors.append(f"{where}: needs at least {MIN_EXAMPLES} examples")
            for i, raw in enumerate(raw_examples):
                example = _check_example(f"{where} example {i}", raw, errors)
                if example is not None:
                    examples.append(example)
    if len(errors) > n_errors:
        return None
    assert isinstance(version, int) and isinstance(instruction, str)
    return PromptSpec(
        slug=slug,
        version=version,
        instruction=instruction,
        examples=tuple(examples),
        max_edit_size=float(max_edit) if max_edit is not None else None,
    )


def load_prompts(path: str | Path = DEFAULT_PROMPTS_PATH) -> dict[str, PromptSpec]:
    """Read and validate a prompt file; raise ``PromptFileError`` listing every problem."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise PromptFileError(path, [f"cannot read file: {exc}"]) from exc
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicate_keys)
    except ValueError as exc:  # JSONDecodeError is a ValueError; so is a duplicate key
        raise PromptFileError(path, [f"invalid JSON: {exc}"]) from exc
    if not isinstance(data, dict) or not data:
        raise PromptFileError(path, ["top level must be a non-empty object keyed by kind slug"])
    errors: list[str] = []
    specs: dict[str, PromptSpec] = {}
    for slug, entry in data.items():
        spec = _check_entry(slug, entry, errors)
        if spec is not None:
            specs[slug] = spec
    if errors:
        raise PromptFileError(path, errors)
    return specs
