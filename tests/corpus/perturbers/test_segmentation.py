"""Sentence splitting and word tokenization on tricky strings, plus structural properties."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apps.corpus.perturbers.segmentation import (
    protected_spans,
    segment,
    split_sentences,
    tokenize_words,
)
from tests.corpus.perturbers.perturber_texts import any_text, markdown, prose, sentences

FAST = settings(max_examples=60, deadline=None)


def prot(text: str) -> list[str]:
    return [text[s:e] for s, e in protected_spans(text)]


# --- sentences -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("One. Two! Three? Four", ["One.", "Two!", "Three?", "Four"]),
        ("Dr. Smith met Mr. Jones. They talked.", ["Dr. Smith met Mr. Jones.", "They talked."]),
        (
            "Fruits, e.g. apples, i.e. not pears. Fine.",
            ["Fruits, e.g. apples, i.e. not pears.", "Fine."],
        ),
        ("Use e.g. Python. Then stop.", ["Use e.g. Python.", "Then stop."]),
        (
            "The U.S. Army is large. It is old.",
            ["The U.S. Army is large.", "It is old."],
        ),
        ("Apples, pears, etc. The end.", ["Apples, pears, etc.", "The end."]),
        ("Apples, pears, etc. and more.", ["Apples, pears, etc. and more."]),
        (
            "Pi is 3.14 exactly. It costs $1,000.50 today.",
            ["Pi is 3.14 exactly.", "It costs $1,000.50 today."],
        ),
        ("See No. 5 and Fig. 3 on p. 12. Done.", ["See No. 5 and Fig. 3 on p. 12.", "Done."]),
        ("Born on Jan. 5. He grew.", ["Born on Jan. 5.", "He grew."]),
        (
            "F. Scott Fitzgerald wrote it. J. K. Rowling too.",
            ["F. Scott Fitzgerald wrote it.", "J. K. Rowling too."],
        ),
        ("Smith et al. found it. Good.", ["Smith et al. found it.", "Good."]),
        ("Meet at 5 p.m. on Monday. Bye.", ["Meet at 5 p.m. on Monday.", "Bye."]),
        ("Wait... What? No!", ["Wait...", "What?", "No!"]),
        ("Wait... then go. Now.", ["Wait... then go.", "Now."]),
        ("Hmm… Right.", ["Hmm…", "Right."]),
        ("Really?! Yes.", ["Really?!", "Yes."]),
        ('He said "Stop." Then he left.', ['He said "Stop."', "Then he left."]),
        ('"Why?" he asked. She smiled.', ['"Why?" he asked.', "She smiled."]),
        ("“Go.” She went.", ["“Go.”", "She went."]),
        ('"Of course you can!" (Chapter 6). Next.', ['"Of course you can!" (Chapter 6).', "Next."]),
        ("(It rained.) We stayed.", ["(It rained.)", "We stayed."]),
        ("**Note.** Read it. Then act.", ["**Note.**", "Read it.", "Then act."]),
        (
            "Visit https://x.org/a.b. Then www.y.com now. Mail a.b@c.org. Ok.",
            ["Visit https://x.org/a.b.", "Then www.y.com now.", "Mail a.b@c.org.", "Ok."],
        ),
        ("2.", ["2."]),
        ("", []),
        ("   \n\n  ", []),
    ],
)
def test_sentences(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


def test_markdown_list() -> None:
    text = (
        "Here are the steps:\n\n"
        "1. **Open Terminal**: Find it in Utilities. Or use Spotlight.\n"
        "2. **Check usage**: Type the command.\n"
        "   - nested bullet. Second part.\n"
        "* star bullet\n"
        "+ plus bullet\n"
        "- [ ] a task\n"
        "a) lettered item\n"
    )
    assert split_sentences(text) == [
        "Here are the steps:",
        "**Open Terminal**: Find it in Utilities.",
        "Or use Spotlight.",
        "**Check usage**: Type the command.",
        "nested bullet.",
        "Second part.",
        "star bullet",
        "plus bullet",
        "a task",
        "lettered item",
    ]
    # list markers are protected, so the "1" of "1." is not a word
    assert tokenize_words(text)[:6] == ["Here", "are", "the", "steps", "Open", "Terminal"]
    assert prot(text) == ["1. ", "2. ", "- ", "* ", "+ ", "- [ ] ", "a) "]


def test_bold_list_item_is_not_a_bullet() -> None:
    assert split_sentences("**Bold** start. Then more.") == ["**Bold** start.", "Then more."]
    assert prot("**Bold** start.") == []


def test_code_fences_are_protected_and_never_split() -> None:
    text = (
        "Run this:\n"
        "```python\n"
        "x = 3.14. Then\n"
        "print('a. B')\n"
        "```\n"
        "Done. Now `a. B` works. Yes.\n"
        "   ```bash\n"
        '   sudo lsof | grep "Cam"\n'
        "   ```\n"
        "~~~\n"
        "tilde. Fence.\n"
        "~~~\n"
        "End."
    )
    assert split_sentences(text) == ["Run this:", "Done.", "Now `a. B` works.", "Yes.", "End."]
    assert prot(text) == [
        "```python\nx = 3.14. Then\nprint('a. B')\n```",
        "`a. B`",
        '```bash\n   sudo lsof | grep "Cam"\n   ```',
        "~~~\ntilde. Fence.\n~~~",
    ]
    assert "print" not in tokenize_words(text) and "tilde" not in tokenize_words(text)


def test_one_line_triple_backticks_is_inline_code() -> None:
    text = '```json {   "Name": "Stafford" } ```'
    assert prot(text) == [text]
    assert split_sentences(text) == [] and tokenize_words(text) == []


def test_unclosed_fence_runs_to_the_end() -> None:
    text = "Intro here.\n```\ncode. More code.\nStill code."
    assert split_sentences(text) == ["Intro here."]
    assert prot(text) == ["```\ncode. More code.\nStill code."]


def test_longer_fence_needs_a_closing_fence_as_long() -> None:
    text = "````\n```\ninside. Still.\n````\nOut. There."
    assert split_sentences(text) == ["Out.", "There."]


def test_headings_tables_and_rules_hold_no_sentences() -> None:
    text = (
        "### 1. Using Terminal\n"
        "You can use it. Here's how:\n\n"
        "| a | b. C |\n|---|---|\n"
        "---\n"
        "Title\n"
        "=====\n"
        "Last one."
    )
    assert split_sentences(text) == ["You can use it.", "Here's how:", "Title", "Last one."]
    assert "Using" in tokenize_words(text) and "C" in tokenize_words(text)


def test_newlines_end_sentences_except_wrapped_prose() -> None:
    assert split_sentences("Heading line\nNext line. Done.") == [
        "Heading line",
        "Next line.",
        "Done.",
    ]
    assert split_sentences("This sentence is\nwrapped here. Next.") == [
        "This sentence is\nwrapped here.",
        "Next.",
    ]
    assert split_sentences("Ends here.\nlowercase start.") == ["Ends here.", "lowercase start."]
    assert split_sentences("Windows\r\nline ends. Fine.\r\n") == [
        "Windows\r\nline ends.",
        "Fine.",
    ]


def test_flattened_markdown_heading() -> None:
    """Some FBI answers lost their newlines: a heading runs into the text after two spaces."""
    text = "### The Title Here  The text starts. It goes on.  #### 1. Next Part - item one."
    assert split_sentences(text) == [
        "The text starts.",
        "It goes on.",
        "#### 1.",
        "Next Part - item one.",
    ]
    assert split_sentences("## A normal heading\nBody text. More.") == ["Body text.", "More."]


def test_all_lower_case_documents_split_before_lower_case() -> None:
    text = "hey there!  how's it going? i was thinking, e.g. about the vote. it matters."
    assert split_sentences(text) == [
        "hey there!",
        "how's it going?",
        "i was thinking, e.g. about the vote.",
        "it matters.",
    ]
    # one lower-case start in a normal document is not enough
    assert split_sentences("The end. and more. Then. Fine.") == [
        "The end. and more.",
        "Then.",
        "Fine.",
    ]


def test_blockquotes() -> None:
    assert split_sentences("> Quoted text. Second.\n> More.") == [
        "Quoted text.",
        "Second.",
        "More.",
    ]


# --- words -----------------------------------------------------------------------------------


def test_words() -> None:
    text = "Pi ≈ 3.14; 1,000 people, e.g. the U.S. team, don't care — well-known and/or AT&T café."
    assert tokenize_words(text) == [
        "Pi", "3.14", "1,000", "people", "e.g", "the", "U.S", "team", "don't", "care",
        "well-known", "and/or", "AT&T", "café",
    ]  # fmt: skip
    assert tokenize_words("snake_case ’tis rock’n’roll") == ["snake_case", "tis", "rock’n’roll"]
    assert tokenize_words("a,b 1, 2") == ["a", "b", "1", "2"]


def test_spans_are_offsets_into_the_untouched_text() -> None:
    text = "  1. **Bold**: text.\n\tNext  one!  "
    seg = segment(text)
    assert [text[s:e] for s, e in seg.sentences] == seg.sentence_texts()
    assert seg.sentence_texts() == ["**Bold**: text.", "Next  one!"]
    assert seg.word_texts() == ["Bold", "text", "Next", "one"]


# --- properties ------------------------------------------------------------------------------


@FAST
@given(st.lists(sentences(), min_size=1, max_size=8), st.sampled_from([" ", "\n", "\n\n", "  "]))
def test_generated_prose_round_trips(sents: list[str], sep: str) -> None:
    assert split_sentences(sep.join(sents)) == sents


@FAST
@given(st.one_of(prose(), markdown(), any_text))
def test_structure(text: str) -> None:
    seg = segment(text)
    for spans in (seg.protected, seg.words, seg.sentences):
        for (_, e1), (s2, _) in itertools.pairwise(spans):
            assert e1 <= s2
        for s, e in spans:
            assert 0 <= s < e <= len(text)
    for s, e in seg.words:
        assert not seg.overlaps_protected(s, e)
        assert text[s].isalnum() and text[e - 1].isalnum()
    for s, e in seg.sentences:
        assert not text[s].isspace() and not text[e - 1].isspace()
        assert any(s <= ws and we <= e for ws, we in seg.words)
        for cs, ce in seg.code:
            assert e <= cs or s >= ce
    for i in seg.alnum_positions:
        assert text[i].isalnum() and not seg.overlaps_protected(i, i + 1)
    assert segment(text) is seg  # cached


@FAST
@given(markdown())
def test_code_content_is_never_in_a_sentence_or_word(text: str) -> None:
    seg = segment(text)
    for cs, ce in seg.code:
        for s, e in (*seg.sentences, *seg.words):
            assert e <= cs or s >= ce
