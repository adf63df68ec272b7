"""Tests for apps.corpus.diff (pure Python; runs without Django).

Run: .venv/bin/python -m pytest -p no:django -p no:cacheprovider --noconftest \
        tests/corpus/test_diff.py -q
"""

from __future__ import annotations

import csv
import html
import json
import random
import re
import sys
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apps.corpus import diff as diff_module
from apps.corpus.diff import (
    DIFF_VERSION,
    NEWLINE_MARKER,
    compute_diff,
    diff_payload,
    diff_stats,
    render_inline_html,
    render_side_by_side,
    tokenize,
)
from tests.conftest import PEERS

FBI_DIR = PEERS / "fbi" / "data"
FBI_ROWS = 2492

SAMPLE = """\
## Renting in a new city

Certainly! Here\u2019s a **step-by-step** guide to writing a cover letter:

1. Introduce yourself: your name, your job, and why you're moving.
2. Mention that you can afford the rent — about $2,450.50 a month — and give references.
3. Close politely; thank the landlord (e.g. "Thank you for your time").

    def greet(name):
        return f"Hello, {name}!"

Naïve café owners in Zürich earn 12.5% more than the well-known average.
<b>Bold</b> & "quoted" text stays escaped.
"""

WORDS = ["the", "a", "cat", "dog", "sat", "Zürich", "12", "3.5", "**", "\n", "  ", ",", "—", "é"]


# --------------------------------------------------------------------------- helpers


def check_ops(ops, a: str, b: str) -> None:
    """The invariants every diff must satisfy."""
    assert "".join(op["a"] for op in ops) == a
    assert "".join(op["b"] for op in ops) == b
    json.loads(json.dumps(ops))  # JSON-serialisable
    for k, op in enumerate(ops):
        assert set(op) <= {"op", "a", "b", "chars"}
        assert op["a"] or op["b"], "no empty ops"
        if op["op"] == "equal":
            assert op["a"] == op["b"]
            assert "chars" not in op
            if k:
                assert ops[k - 1]["op"] != "equal", "adjacent equal ops are merged"
        else:
            assert op["a"] != op["b"]
            expected = "replace" if op["a"] and op["b"] else "delete" if op["a"] else "insert"
            assert op["op"] == expected
        if "chars" in op:
            assert op["op"] == "replace"
            chars = op["chars"]
            assert "".join(c["a"] for c in chars) == op["a"]
            assert "".join(c["b"] for c in chars) == op["b"]
            for c in chars:
                assert c["a"] or c["b"]
                if c["op"] == "equal":
                    assert c["a"] == c["b"]
                else:
                    assert c["a"] != c["b"]


_TAG_RE = re.compile(r"<[^>]*>")
_OUR_TAG_RE = re.compile(r'</?(del|ins|span)( class="diff-(del|ins|char|ws|gap)")?>')
_MARKER = f'<span class="diff-ws">{NEWLINE_MARKER}</span>'


def html_text(fragment: str) -> str:
    """Visible text of rendered HTML, without the newline markers."""
    return html.unescape(_TAG_RE.sub("", fragment.replace(_MARKER, "")))


def check_render(ops, a: str, b: str) -> None:
    inline = render_inline_html(ops)
    left, right = render_side_by_side(ops)
    for fragment in (inline, left, right):
        # every "<" and ">" left belongs to one of our tags
        assert "<" not in _TAG_RE.sub("", fragment) and ">" not in _TAG_RE.sub("", fragment)
        for tag in _TAG_RE.findall(fragment):
            assert _OUR_TAG_RE.fullmatch(tag), tag
    assert html_text(left) == a
    assert html_text(right) == b
    no_ins = re.sub(r'<ins class="diff-ins">.*?</ins>', "", inline, flags=re.S)
    no_del = re.sub(r'<del class="diff-del">.*?</del>', "", inline, flags=re.S)
    assert html_text(no_ins) == a
    assert html_text(no_del) == b


def lcs_dp(a, b) -> int:
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def lcs_bits(a, b) -> int:
    """LCS length, bit-parallel (independent of the module's implementation)."""
    match: dict[object, int] = {}
    for j, y in enumerate(b):
        match[y] = match.get(y, 0) | (1 << j)
    full = (1 << len(b)) - 1
    v = full
    for x in a:
        u = v & match.get(x, 0)
        v = ((v + u) | (v & ~u)) & full
    return len(b) - bin(v).count("1")


def equal_token_runs(ops, a: str, b: str):
    """Tokens of each text inside equal ops; checks op boundaries fall on token boundaries."""

    def spans(text, side):
        toks = tokenize(text)
        offsets = [0]
        for t in toks:
            offsets.append(offsets[-1] + len(t))
        index = {off: k for k, off in enumerate(offsets)}
        inside, pos = [], 0
        highlighted = 0
        for op in ops:
            seg = op[side]
            start, end = pos, pos + len(seg)
            assert start in index and end in index, "op boundary inside a token"
            chunk = toks[index[start] : index[end]]
            if op["op"] == "equal":
                inside.extend(chunk)
            else:
                highlighted += len(chunk)
            pos = end
        return toks, inside, highlighted

    ta, eq_a, hl_a = spans(a, "a")
    tb, eq_b, hl_b = spans(b, "b")
    assert eq_a == eq_b, "the unhighlighted tokens are a common subsequence"
    return ta, tb, len(eq_a), hl_a + hl_b


# --------------------------------------------------------------------------- properties

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(st.text())
def test_tokenize_is_lossless(text):
    assert "".join(tokenize(text)) == text
    assert all(tokenize(text))


@SETTINGS
@given(st.text(), st.text())
def test_exact_for_arbitrary_unicode(a, b):
    ops = compute_diff(a, b)
    check_ops(ops, a, b)
    check_render(ops, a, b)
    equal_token_runs(ops, a, b)


@SETTINGS
@given(st.lists(st.sampled_from(WORDS), max_size=30), st.lists(st.sampled_from(WORDS), max_size=30))
def test_exact_for_token_soup(wa, wb):
    # few distinct tokens, many repeats: the hard case for alignment and sliding
    a, b = "".join(wa), "".join(wb)
    ops = compute_diff(a, b)
    check_ops(ops, a, b)
    _ta, _tb, _common, _hl = equal_token_runs(ops, a, b)


@st.composite
def edited_sample(draw):
    text = SAMPLE
    for _ in range(draw(st.integers(1, 6))):
        pos = draw(st.integers(0, len(text)))
        kind = draw(st.sampled_from(["insert", "delete", "replace", "typo", "space", "newline"]))
        if kind == "insert":
            text = text[:pos] + draw(st.text(max_size=12)) + text[pos:]
        elif kind == "delete":
            text = text[:pos] + text[pos + draw(st.integers(1, 40)) :]
        elif kind == "replace":
            text = text[:pos] + draw(st.sampled_from(WORDS)) + text[pos + draw(st.integers(1, 8)) :]
        elif kind == "typo" and pos + 2 <= len(text):
            text = text[:pos] + text[pos + 1] + text[pos] + text[pos + 2 :]
        elif kind == "space":
            text = text[:pos] + " " + text[pos:]
        elif kind == "newline":
            text = text[:pos] + "\n" + text[pos:]
    return text


@SETTINGS
@given(edited_sample(), st.booleans())
def test_exact_for_edits_of_real_text(perturbed, swap):
    a, b = (perturbed, SAMPLE) if swap else (SAMPLE, perturbed)
    ops = compute_diff(a, b)
    check_ops(ops, a, b)
    check_render(ops, a, b)
    ta, tb, _common, highlighted = equal_token_runs(ops, a, b)
    minimum = len(ta) + len(tb) - 2 * lcs_bits(ta, tb)
    assert highlighted >= minimum
    # a few edits stay a few highlighted spans, not a rewrite of the whole text
    assert highlighted <= 2 * minimum + 12


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 5), max_size=40), st.lists(st.integers(0, 5), max_size=40))
def test_reference_lcs_matches_dp(a, b):
    assert lcs_bits(a, b) == lcs_dp(a, b)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 4), max_size=40), st.lists(st.integers(0, 4), max_size=40))
def test_alignment_is_minimal(a, b):
    script = diff_module._diff_seq(a, b)
    assert script.count(0) == lcs_dp(a, b)
    assert len(a) == sum(1 for t in script if t != 2)
    assert len(b) == sum(1 for t in script if t != 1)


@settings(max_examples=100, deadline=None)
@given(edited_sample())
def test_patience_fallback_is_exact(perturbed):
    old = diff_module.EXACT_LIMIT
    diff_module.EXACT_LIMIT = 50  # force the anchor-splitting path
    try:
        ops = compute_diff(SAMPLE, perturbed)
    finally:
        diff_module.EXACT_LIMIT = old
    check_ops(ops, SAMPLE, perturbed)
    equal_token_runs(ops, SAMPLE, perturbed)


# --------------------------------------------------------------------------- examples


def test_identical_texts_give_one_equal_op():
    assert compute_diff(SAMPLE, SAMPLE) == [{"op": "equal", "a": SAMPLE, "b": SAMPLE}]
    assert compute_diff("", "") == []
    assert diff_stats(compute_diff(SAMPLE, SAMPLE))["edit_size"] == 0
    assert diff_stats(compute_diff(SAMPLE, SAMPLE))["changed_spans"] == 0


def test_empty_sides():
    assert compute_diff("", "new text") == [{"op": "insert", "a": "", "b": "new text"}]
    assert compute_diff("old text", "") == [{"op": "delete", "a": "old text", "b": ""}]


def test_adjacent_word_changes_are_one_span():
    ops = compute_diff("the cat sat", "a dog sat")
    assert ops == [
        {"op": "replace", "a": "the cat", "b": "a dog"},
        {"op": "equal", "a": " sat", "b": " sat"},
    ]


def test_insertion_lands_on_word_boundary():
    ops = compute_diff("the cat", "the big cat")
    assert ops == [
        {"op": "equal", "a": "the ", "b": "the "},
        {"op": "insert", "a": "", "b": "big "},
        {"op": "equal", "a": "cat", "b": "cat"},
    ]
    ops = compute_diff("L1\nL2\nL3\n", "L1\nL3\n")
    assert ops[1] == {"op": "delete", "a": "L2\n", "b": ""}


def test_unchanged_words_between_changes_stay_unhighlighted():
    ops = compute_diff(
        "The quick brown fox jumps over the lazy dog.",
        "A fast brown fox leaped over a sleepy dog!",
    )
    equal = [op["a"] for op in ops if op["op"] == "equal"]
    assert equal == [" brown fox ", " over ", " dog"]


def test_char_detail_for_a_typo():
    ops = compute_diff("We recieve the letter.", "We receive the letter.")
    (change,) = [op for op in ops if op["op"] != "equal"]
    assert change["a"] == "recieve" and change["b"] == "receive"
    assert change["chars"][0] == {"op": "equal", "a": "rec", "b": "rec"}
    assert "".join(c["a"] for c in change["chars"] if c["op"] != "equal") == "i"
    inline = render_inline_html(ops)
    assert '<del class="diff-del">rec<span class="diff-char">i</span>eve</del>' in inline
    assert '<ins class="diff-ins">rece<span class="diff-char">i</span>ve</ins>' in inline


def test_char_detail_for_numbers_but_not_unrelated_words():
    ops = compute_diff("He paid 1,250 dollars.", "He paid 1,520 dollars.")
    number = next(op for op in ops if op["op"] == "replace")
    assert number["a"] == "1,250"
    assert "chars" in number
    ops = compute_diff("the cat sat", "a dog sat")
    assert "chars" not in ops[0]


def test_html_is_escaped():
    a = 'Say <script>alert("x")</script> & go'
    b = 'Say <script>alert("y")</script> & <b>go</b>'
    ops = compute_diff(a, b)
    check_ops(ops, a, b)
    inline = render_inline_html(ops)
    left, right = render_side_by_side(ops)
    for fragment in (inline, left, right):
        assert "<script>" not in fragment and "<b>" not in fragment
        assert "&lt;script&gt;" in fragment
    assert "&amp;" in inline
    check_render(ops, a, b)


def test_newlines_are_preserved_in_html():
    a = "line one\nline two\n\nline four"
    b = "line one\nline 2\n\nline four"
    inline = render_inline_html(compute_diff(a, b))
    assert inline.startswith("line one\nline ")
    assert inline.endswith("\n\nline four")


def test_whitespace_only_changes_are_visible():
    # a removed blank line
    ops = compute_diff("para one\n\npara two", "para one\npara two")
    assert diff_stats(ops)["whitespace_only"]
    assert diff_stats(ops)["edit_size"] == 0
    inline = render_inline_html(ops)
    left, right = render_side_by_side(ops)
    marker = f'<del class="diff-del"><span class="diff-ws">{NEWLINE_MARKER}</span>\n</del>'
    assert marker in inline and marker in left
    assert '<span class="diff-gap"></span>' in right
    # a doubled space
    ops = compute_diff("one two", "one  two")
    assert [op["op"] for op in ops] == ["equal", "replace", "equal"]
    inline = render_inline_html(ops)
    assert '<ins class="diff-ins"><span class="diff-ws"> </span>' in inline
    assert "diff-char" in inline
    # a line joined into the next
    inline = render_inline_html(compute_diff("a\nb", "a b"))
    assert f'<del class="diff-del"><span class="diff-ws">{NEWLINE_MARKER}</span>\n</del>' in inline
    assert '<ins class="diff-ins"><span class="diff-ws"> </span></ins>' in inline


def test_markdown_markers_are_tokens():
    assert tokenize("**Bold** ## x --- y...") == [
        "**", "Bold", "**", " ", "##", " ", "x", " ", "---", " ", "y", "...",
    ]  # fmt: skip
    ops = compute_diff("**Note:** keep it", "Note: keep it")
    assert [op["a"] for op in ops if op["op"] == "delete"] == ["**", "**"]


def test_stats():
    ops = compute_diff(
        "The cat sat on the mat today.", "The dog sat on the red mat yesterday, happily."
    )
    stats = diff_stats(ops)
    assert stats["tokens_original"] == 8  # 7 words + "."
    assert stats["words_replaced"] == 2  # cat -> dog, today -> yesterday
    assert stats["words_inserted"] == 2  # red, happily
    assert stats["words_deleted"] == 0
    assert 0 < stats["edit_size"] < 1
    assert diff_stats(compute_diff("a b c d", ""))["edit_size"] == 1
    assert diff_stats(compute_diff("a b c d", "a b c d e f g h"))["edit_size"] == 1


def test_payload_and_stored_ops_render():
    payload = diff_payload("old words here", "new words here")
    assert payload["version"] == DIFF_VERSION
    stored = json.loads(json.dumps(payload))
    assert render_inline_html(stored["ops"]) == render_inline_html(payload["ops"])


def test_long_texts_are_fast():
    rng = random.Random(7)
    vocab = [f"w{k}" for k in range(400)] + ["the", "a", ",", "."] * 50
    words = [rng.choice(vocab) for _ in range(6000)]
    a = " ".join(words)
    edited = list(words)
    for _ in range(300):
        k = rng.randrange(len(edited))
        edited[k : k + rng.randint(0, 3)] = [rng.choice(vocab) for _ in range(rng.randint(0, 3))]
    b = " ".join(edited)
    unrelated = " ".join(rng.choice(vocab) for _ in range(6000))
    for x, y in ((a, b), (a, unrelated), ("x " * 6000, "y " * 6000)):
        start = time.perf_counter()
        ops = compute_diff(x, y)
        elapsed = time.perf_counter() - start
        check_ops(ops, x, y)
        assert elapsed < 3, elapsed


# --------------------------------------------------------------------------- FBI data


def fbi_rows():
    csv.field_size_limit(sys.maxsize)
    rows = []
    for path in sorted(FBI_DIR.glob("*/*.tsv")):
        with path.open(newline="", encoding="utf-8") as handle:
            for row in csv.DictReader(handle, delimiter="\t"):
                rows.append((row["cdx"], row["og"] or "", row["perturbed_gpt4"] or ""))
    return rows


@pytest.mark.skipif(not FBI_DIR.is_dir(), reason=f"peer data not found: {FBI_DIR}")
def test_fbi_all_rows():
    rows = fbi_rows()
    assert len(rows) == FBI_ROWS
    total = 0.0
    worst = (0.0, "")
    highlighted_sum = minimum_sum = 0
    content_highlighted = content_minimum = 0
    for cdx, a, b in rows:
        start = time.perf_counter()
        ops = compute_diff(a, b)
        elapsed = time.perf_counter() - start
        total += elapsed
        worst = max(worst, (elapsed, cdx))
        check_ops(ops, a, b)
        ta, tb, common, highlighted = equal_token_runs(ops, a, b)
        lcs = lcs_bits(ta, tb)
        assert common <= lcs
        highlighted_sum += highlighted
        minimum_sum += len(ta) + len(tb) - 2 * lcs
        # the same, ignoring whitespace tokens (absorbed spaces are a display choice)
        ca = [t for t in ta if not t.isspace()]
        cb = [t for t in tb if not t.isspace()]
        content_minimum += len(ca) + len(cb) - 2 * lcs_bits(ca, cb)
        content_highlighted += sum(
            1
            for op in ops
            if op["op"] != "equal"
            for side in ("a", "b")
            for t in tokenize(op[side])
            if not t.isspace()
        )
    ratio = highlighted_sum / minimum_sum
    content_ratio = content_highlighted / content_minimum
    print(
        f"\nFBI diff: {len(rows)} rows in {total:.2f}s, "
        f"worst {worst[0] * 1000:.1f} ms ({worst[1]}); "
        f"highlighted/minimum tokens {ratio:.3f} (non-whitespace {content_ratio:.3f})"
    )
    assert ratio <= 1.2
    assert content_ratio <= 1.15
    assert worst[0] < 1.0
    assert total < 20


@pytest.mark.skipif(not FBI_DIR.is_dir(), reason=f"peer data not found: {FBI_DIR}")
def test_fbi_sample_renders():
    rows = fbi_rows()[::25]
    for _cdx, a, b in rows:
        ops = compute_diff(a, b)
        check_render(ops, a, b)
        stats = diff_stats(ops)
        assert stats["edit_size"] >= 0
        assert (stats["changed_spans"] == 0) == (a == b)
