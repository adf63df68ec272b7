"""Tests for apps.corpus.generation.llm_prompt and fixtures/perturbation_prompts.json.

Pure Python; runs without Django:
    .venv/bin/python -m pytest -p no:django -p no:cacheprovider --noconftest \
        tests/corpus/test_llm_prompt.py -q
"""

from __future__ import annotations

import ast
import csv
import json
from pathlib import Path

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from apps.corpus.diff import compute_diff, diff_stats
from apps.corpus.generation.llm_prompt import (
    DEFAULT_PROMPTS_PATH,
    REASON_EMPTY_REPLY,
    REASON_EMPTY_TEXT,
    REASON_MALFORMED_EXPLANATION,
    REASON_MALFORMED_PERTURBED,
    REASON_MULTIPLE_EXPLANATION,
    REASON_MULTIPLE_PERTURBED,
    REASON_NESTED_PERTURBED,
    REASON_NO_PERTURBED,
    REASON_UNCHANGED,
    REASON_WHITESPACE_ONLY,
    GenerationParse,
    PromptFileError,
    PromptSpec,
    build_messages,
    contains_tag_marker,
    format_reply,
    load_prompts,
    parse_generation,
)
from tests.conftest import PEERS

ROOT = Path(__file__).resolve().parents[2]
PROMPTS = ROOT / "fixtures" / "perturbation_prompts.json"
KINDS = json.loads((ROOT / "fixtures" / "catalog" / "kinds.json").read_text(encoding="utf-8"))
KIND_BY_SLUG = {k["slug"]: k for k in KINDS}
# LLM kinds a generation job writes (adversarial searches write their own kinds' texts)
LLM_SLUGS = {k["slug"] for k in KINDS if k["method"] == "llm" and k["family"] != "adversarial"}
FBI_DATA = PEERS / "fbi" / "data"

ORIGINAL = "The bridge opened in 1932. It carries six lanes of traffic."


def _level_defaults() -> tuple[dict[str, float], float]:
    """MAX_EDIT_SIZE / DEFAULT_MAX_EDIT_SIZE from checks.py (read statically: it imports Django)."""
    tree = ast.parse((ROOT / "apps" / "corpus" / "generation" / "checks.py").read_text())
    values = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name in {"MAX_EDIT_SIZE", "DEFAULT_MAX_EDIT_SIZE"}:
                values[name] = ast.literal_eval(node.value)
    return values["MAX_EDIT_SIZE"], values["DEFAULT_MAX_EDIT_SIZE"]


@pytest.fixture(scope="module")
def specs() -> dict[str, PromptSpec]:
    return load_prompts(PROMPTS)


def _write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "prompts.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _entry(**overrides: object) -> dict:
    entry: dict = {
        "version": 1,
        "instruction": "Swap one word for a synonym.",
        "examples": [
            {"original": "A big dog.", "perturbed": "A large dog.", "explanation": "big -> large"},
            {
                "source": "Describe the sky.",
                "original": "The sky is blue.",
                "perturbed": "The sky is azure.",
                "explanation": "blue -> azure",
            },
        ],
    }
    entry.update(overrides)
    return entry


# --------------------------------------------------------------------------- the shipped file


def test_default_path_is_the_fixture():
    assert DEFAULT_PROMPTS_PATH == PROMPTS


def test_every_llm_kind_has_a_prompt_and_no_other(specs):
    assert len(LLM_SLUGS) >= 40  # the catalog really has its llm kinds
    missing = LLM_SLUGS - set(specs)
    unknown = set(specs) - LLM_SLUGS
    assert not missing, f"llm kinds without a prompt: {sorted(missing)}"
    assert not unknown, f"prompts for unknown or rule-based kinds: {sorted(unknown)}"


def test_every_entry_validates(specs):
    for slug, spec in specs.items():
        assert spec.slug == slug
        assert isinstance(spec.version, int) and spec.version >= 1
        assert len(spec.instruction) >= 80, slug  # precise, not a one-liner
        assert len(spec.examples) >= 2, slug
        for ex in spec.examples:
            assert ex.perturbed != ex.original
            assert ex.explanation.strip()
        if spec.max_edit_size is not None:
            assert spec.max_edit_size > 0


def test_examples_are_within_their_kind_edit_size_limit(specs):
    level_limits, default_limit = _level_defaults()
    for slug, spec in specs.items():
        limit = spec.max_edit_size
        if limit is None:
            limit = level_limits.get(KIND_BY_SLUG[slug]["level"], default_limit)
        for ex in spec.examples:
            size = diff_stats(compute_diff(ex.original, ex.perturbed))["edit_size"]
            assert 0 < size <= limit, (slug, ex.original, size, limit)


def test_minor_kinds_are_not_looser_than_their_major_twin(specs):
    level_limits, default_limit = _level_defaults()
    for slug in specs:
        if not slug.endswith("-minor"):
            continue
        major = slug[: -len("minor")] + "major"
        assert major in specs
        assert specs[slug].instruction != specs[major].instruction

        def limit(s: str) -> float:
            own = specs[s].max_edit_size
            return (
                own
                if own is not None
                else level_limits.get(KIND_BY_SLUG[s]["level"], default_limit)
            )

        assert limit(slug) <= limit(major), slug


def test_degree_is_spelled_out(specs):
    for slug, spec in specs.items():
        degree = KIND_BY_SLUG[slug]["degree"]
        if degree:
            assert spec.instruction.lower().startswith(f"{degree} degree"), slug


def test_example_originals_are_not_reused_across_kinds(specs):
    seen: dict[str, str] = {}
    for slug, spec in specs.items():
        for ex in spec.examples:
            assert ex.original not in seen, (slug, seen.get(ex.original))
            seen[ex.original] = slug


@pytest.mark.skipif(not FBI_DATA.is_dir(), reason=f"peer data not found: {FBI_DATA}")
def test_examples_are_not_taken_from_the_fbi_release(specs):
    csv.field_size_limit(10**9)
    released = set()
    for path in FBI_DATA.glob("*/*.tsv"):
        with path.open(encoding="utf-8", newline="") as fh:
            for row in csv.DictReader(fh, delimiter="\t"):
                released.update(v.strip() for v in row.values() if v and v.strip())
    for spec in specs.values():
        for ex in spec.examples:
            assert ex.original.strip() not in released
            assert ex.perturbed.strip() not in released


def test_the_score_invariant_kind_asks_for_a_quality_preserving_change(specs):
    instruction = specs["fbi-score-invariant"].instruction.lower()
    assert "not lower" in instruction
    assert "paraphrase" in instruction


# --------------------------------------------------------------------------- load_prompts


def test_load_prompts_accepts_a_minimal_file(tmp_path):
    specs = load_prompts(_write(tmp_path, {"my-kind": _entry(max_edit_size=0.4)}))
    spec = specs["my-kind"]
    assert spec.version == 1 and spec.max_edit_size == 0.4
    assert spec.examples[0].source == "" and spec.examples[1].source == "Describe the sky."
    assert spec.example_dicts()[1]["perturbed"] == "The sky is azure."


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({k: v for k, v in _entry().items() if k != "instruction"}, "missing field 'instruction'"),
        ({k: v for k, v in _entry().items() if k != "version"}, "missing field 'version'"),
        ({k: v for k, v in _entry().items() if k != "examples"}, "missing field 'examples'"),
        (_entry(version="1"), "'version' must be an integer"),
        (_entry(version=True), "'version' must be an integer"),
        (_entry(version=0), "'version' must be an integer"),
        (_entry(instruction="  "), "'instruction' must be a non-empty string"),
        (_entry(examples=_entry()["examples"][:1]), "at least 2 examples"),
        (_entry(examples="none"), "'examples' must be a list"),
        (_entry(max_edit_size=0), "'max_edit_size' must be a positive number"),
        (_entry(max_edit_size="0.5"), "'max_edit_size' must be a positive number"),
        (_entry(extra=1), "unknown field 'extra'"),
        (
            _entry(
                examples=[
                    *_entry()["examples"],
                    {"original": "x", "perturbed": "x", "explanation": "e"},
                ]
            ),
            "identical to 'original'",
        ),
        (
            _entry(examples=[*_entry()["examples"], {"original": "x", "perturbed": "y"}]),
            "'explanation' must be a non-empty string",
        ),
        (
            _entry(
                examples=[
                    *_entry()["examples"],
                    {"original": "x", "perturbed": "<perturbed>y", "explanation": "e"},
                ]
            ),
            "contains a reply tag marker",
        ),
        (
            _entry(
                examples=[
                    *_entry()["examples"],
                    {"original": "a b", "perturbed": "a  b", "explanation": "e"},
                ]
            ),
            "does not parse back",
        ),
        (
            _entry(
                examples=[
                    *_entry()["examples"],
                    {"original": "a", "perturbed": "b", "explanation": "e", "note": "?"},
                ]
            ),
            "unknown field 'note'",
        ),
    ],
)
def test_load_prompts_rejects_invalid_entries(tmp_path, entry, message):
    with pytest.raises(PromptFileError) as info:
        load_prompts(_write(tmp_path, {"my-kind": entry}))
    assert any(message in err for err in info.value.errors), info.value.errors


def test_load_prompts_reports_every_problem(tmp_path):
    data = {"a-kind": _entry(version="x"), "b-kind": _entry(instruction="")}
    with pytest.raises(PromptFileError) as info:
        load_prompts(_write(tmp_path, data))
    assert len(info.value.errors) == 2
    assert "a-kind" in str(info.value) and "b-kind" in str(info.value)


def test_load_prompts_rejects_bad_files(tmp_path):
    path = tmp_path / "p.json"
    path.write_text('{"my-kind": {"version": 1,', encoding="utf-8")
    with pytest.raises(PromptFileError, match="invalid JSON"):
        load_prompts(path)
    path.write_text('{"k": 1, "k": 2}', encoding="utf-8")
    with pytest.raises(PromptFileError, match="duplicate key"):
        load_prompts(path)
    path.write_text("[]", encoding="utf-8")
    with pytest.raises(PromptFileError, match="top level"):
        load_prompts(path)
    with pytest.raises(PromptFileError, match="cannot read"):
        load_prompts(tmp_path / "missing.json")
    with pytest.raises(PromptFileError, match="not a valid kind slug"):
        load_prompts(_write(tmp_path, {"Bad Slug": _entry()}))


# --------------------------------------------------------------------------- build_messages


def test_build_messages_layout():
    examples = _entry()["examples"]
    messages = build_messages(
        instruction="Swap one word for a synonym.",
        examples=examples,
        original=ORIGINAL,
        source="Tell me about the bridge.",
        text_name="answer",
    )
    roles = [m["role"] for m in messages]
    assert roles == ["system", "user", "assistant", "user", "assistant", "user"]
    system = messages[0]["content"]
    assert "Swap one word for a synonym." in system
    for tag in ("<perturbed>", "</perturbed>", "<explanation>", "</explanation>"):
        assert tag in system
    assert "answer" in system
    for ex, user, assistant in zip(examples, messages[1:-1:2], messages[2:-1:2], strict=True):
        assert ex["original"] in user["content"]
        assert ("source" in ex) == ("<source>" in user["content"])
        if "source" in ex:
            assert ex["source"] in user["content"]
        assert assistant["content"] == format_reply(ex["perturbed"], ex["explanation"])
        parsed = parse_generation(assistant["content"], ex["original"])
        assert parsed.text == ex["perturbed"] and parsed.explanation == ex["explanation"]
    last = messages[-1]["content"]
    assert f"<original>\n{ORIGINAL}\n</original>" in last
    assert "<source>\nTell me about the bridge.\n</source>" in last
    assert last.startswith("Source") and "Answer to perturb:" in last


def test_build_messages_without_source_has_no_source_block():
    messages = build_messages(instruction="Do it.", examples=[], original=ORIGINAL)
    assert [m["role"] for m in messages] == ["system", "user"]
    assert "<source>" not in messages[-1]["content"]
    assert "Text to perturb:" in messages[-1]["content"]


def test_build_messages_from_every_spec(specs):
    for spec in specs.values():
        messages = spec.build_messages(ORIGINAL, source="Q?", text_name="summary")
        assert len(messages) == 2 + 2 * len(spec.examples)
        assert spec.instruction in messages[0]["content"]
        assert ORIGINAL in messages[-1]["content"]


@pytest.mark.parametrize(
    "examples",
    [
        [{"original": "a", "perturbed": "b"}],
        [{"original": "", "perturbed": "b", "explanation": "e"}],
        [{"original": "a", "perturbed": "b", "explanation": "e", "source": 3}],
    ],
)
def test_build_messages_rejects_bad_examples(examples):
    with pytest.raises(ValueError):
        build_messages(instruction="Do it.", examples=examples, original=ORIGINAL)


def test_build_messages_rejects_empty_instruction():
    with pytest.raises(ValueError):
        build_messages(instruction=" ", examples=[], original=ORIGINAL)


# --------------------------------------------------------------------------- parse_generation

CHANGED = "The bridge opened in 1936. It carries six lanes of traffic."


def _parsed(reply: str) -> GenerationParse:
    return parse_generation(reply, ORIGINAL)


def test_parse_good_reply():
    result = _parsed(format_reply(CHANGED, "Changed the year from 1932 to 1936."))
    assert result == GenerationParse("parsed", CHANGED, "Changed the year from 1932 to 1936.", "")
    assert result.ok


def test_parse_tolerates_chatter_around_the_blocks():
    reply = (
        "Sure! Here is the perturbed text.\n\n"
        f"<perturbed>{CHANGED}</perturbed>\n"
        "<explanation> The year changed. </explanation>\n\nLet me know if you need more."
    )
    result = _parsed(reply)
    assert result.text == CHANGED and result.explanation == "The year changed."


def test_parse_tolerates_code_fences_around_the_tags():
    reply = f"```xml\n<perturbed>\n{CHANGED}\n</perturbed>\n<explanation>\nx\n</explanation>\n```"
    assert _parsed(reply).text == CHANGED


def test_parse_keeps_fences_inside_the_block():
    # never guessed away: a fence inside the tags is part of the text
    result = _parsed(f"<perturbed>\n```\n{CHANGED}\n```\n</perturbed>")
    assert result.text == f"```\n{CHANGED}\n```"


def test_parse_accepts_explanation_first_and_any_tag_case():
    result = _parsed(f"<Explanation>why</Explanation>\n<PERTURBED>{CHANGED}</PERTURBED>")
    assert result.text == CHANGED and result.explanation == "why"


def test_parse_missing_explanation_is_allowed():
    result = _parsed(f"<perturbed>\n{CHANGED}\n</perturbed>")
    assert result.ok and result.text == CHANGED and result.explanation == ""


def test_parse_strips_only_one_newline_inside_the_tags():
    result = _parsed(f"<perturbed>\n\n  {CHANGED}\n\n</perturbed>")
    assert result.text == f"\n  {CHANGED}\n"
    crlf = _parsed(f"<perturbed>\r\n{CHANGED}\r\n</perturbed>")
    assert crlf.text == CHANGED


def test_parse_missing_perturbed_tag():
    result = _parsed(f"{CHANGED}\n<explanation>Changed the year.</explanation>")
    assert result.status == "unparsed" and result.text is None
    assert result.reason == REASON_NO_PERTURBED
    assert result.explanation == "Changed the year."


def test_parse_two_perturbed_blocks():
    reply = f"<perturbed>{CHANGED}</perturbed><perturbed>{CHANGED}!</perturbed>"
    assert _parsed(reply).reason == REASON_MULTIPLE_PERTURBED


def test_parse_chatter_quoting_the_tag_is_not_guessed():
    reply = f"I will put the text in <perturbed> tags.\n<perturbed>{CHANGED}</perturbed>"
    assert _parsed(reply).reason == REASON_MULTIPLE_PERTURBED


@pytest.mark.parametrize(
    "reply",
    [
        f"<perturbed>{CHANGED}",
        f"{CHANGED}</perturbed>",
        f"</perturbed>{CHANGED}<perturbed>",
        f"<perturbed>{CHANGED}</perturbed></perturbed>",
    ],
)
def test_parse_malformed_perturbed_tags(reply):
    assert _parsed(reply).reason == REASON_MALFORMED_PERTURBED


def test_parse_explanation_nested_in_perturbed():
    reply = f"<perturbed>{CHANGED}<explanation>x</explanation></perturbed>"
    assert _parsed(reply).reason == REASON_NESTED_PERTURBED


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (f"<perturbed>{CHANGED}</perturbed><explanation>x", REASON_MALFORMED_EXPLANATION),
        (
            f"<perturbed>{CHANGED}</perturbed><explanation>a</explanation>"
            "<explanation>b</explanation>",
            REASON_MULTIPLE_EXPLANATION,
        ),
    ],
)
def test_parse_malformed_explanation(reply, reason):
    result = _parsed(reply)
    assert result.status == "unparsed" and result.reason == reason and result.text is None


@pytest.mark.parametrize("inner", ["", "\n", "\n\n", "   ", "\n \t\n"])
def test_parse_empty_perturbed_text(inner):
    assert _parsed(f"<perturbed>{inner}</perturbed><explanation>x</explanation>").reason == (
        REASON_EMPTY_TEXT
    )


@pytest.mark.parametrize("reply", ["", "   \n"])
def test_parse_empty_reply(reply):
    assert _parsed(reply).reason == REASON_EMPTY_REPLY


def test_parse_identical_to_original():
    result = _parsed(format_reply(ORIGINAL, "I changed nothing."))
    assert result.status == "unparsed" and result.reason == "unchanged" == REASON_UNCHANGED
    assert result.explanation == "I changed nothing."


def test_parse_whitespace_only_change():
    result = _parsed(f"<perturbed>\n{ORIGINAL}\n\n</perturbed>")
    assert result.reason == REASON_WHITESPACE_ONLY


@pytest.mark.parametrize(
    "reply",
    [
        "I cannot help with that.",
        "I'm sorry, but I can't modify this text.",
        "```\nThe bridge opened in 1936.\n```",
    ],
)
def test_parse_reply_without_usable_text(reply):
    result = _parsed(reply)
    assert result == GenerationParse("unparsed", None, "", REASON_NO_PERTURBED)


# --------------------------------------------------------------------------- properties

_FRAGMENTS = st.sampled_from(
    ["<", ">", "/", "perturbed", "explanation", "<perturbed", "perturbed>", "\n", "\r", " ", "```"]
)
_TEXTS = st.lists(st.text(max_size=20) | _FRAGMENTS, max_size=8).map("".join)


def _usable(t: str, original: str) -> bool:
    return not contains_tag_marker(t) and t.split() != original.split() and bool(t.strip())


@settings(max_examples=300, deadline=None)
@given(t=_TEXTS, original=_TEXTS)
@example(t="a <perturbed b", original="a")
@example(t="x</perturbe>y", original="")
def test_property_raw_block_reads_back(t, original):
    # The brief's property: a tag-free text t != original comes back unchanged. Exceptions by
    # design: blank t, a whitespace-only difference, and the single newline right inside each
    # tag, which the parser strips.
    assume(_usable(t, original))
    assume(not t.startswith(("\n", "\r\n")) and not t.endswith("\n"))
    reply = f"<perturbed>{t}</perturbed><explanation>x</explanation>"
    result = parse_generation(reply, original)
    assert result.status == "parsed", result.reason
    assert result.text == t and result.explanation == "x"


@settings(max_examples=300, deadline=None)
@given(t=_TEXTS, original=_TEXTS, chatter=st.text(max_size=30))
def test_property_format_reply_round_trips(t, original, chatter):
    # With format_reply's own newlines, even text starting/ending in newlines survives.
    assume(_usable(t, original) and not t.endswith("\r") and not contains_tag_marker(chatter))
    result = parse_generation(f"{chatter}\n{format_reply(t, 'why')}\n{chatter}", original)
    assert result.status == "parsed", result.reason
    assert result.text == t and result.explanation == "why"


@settings(max_examples=300, deadline=None)
@given(reply=st.text(max_size=80) | _TEXTS, original=_TEXTS)
def test_property_parser_never_crashes_and_is_consistent(reply, original):
    result = parse_generation(reply, original)
    assert result.status in {"parsed", "unparsed"}
    if result.status == "parsed":
        assert result.reason == "" and result.text is not None
        assert result.text != original and result.text.strip()
        assert not contains_tag_marker(result.text)
        assert result.text in reply
    else:
        assert result.reason and result.text is None


def test_tag_marker_detection():
    assert contains_tag_marker("x </Explanation> y")
    assert not contains_tag_marker("a < perturbed > b <perturbed/> perturbed")
