"""Shared hypothesis strategies and invariant checks for the perturber tests (not a test file)."""

from __future__ import annotations

from collections import Counter

from hypothesis import strategies as st

from apps.corpus.perturbers import PerturbResult, apply_edits
from apps.corpus.perturbers.segmentation import (
    NO_SPLIT_ABBREVIATIONS,
    NO_SPLIT_BEFORE_NUMBER,
    segment,
)

_LETTERS = "abcdefghijklmnopqrstuvwxyz"
_AVOID = NO_SPLIT_ABBREVIATIONS | NO_SPLIT_BEFORE_NUMBER

#: plain words that can end a sentence without looking like an abbreviation
words = st.text(alphabet=_LETTERS, min_size=2, max_size=9).filter(lambda w: w not in _AVOID)
#: a few tokens with digits, apostrophes, hyphens, decimals
odd_words = st.sampled_from(["3.14", "1,000", "don't", "well-known", "42", "x2", "naïve", "café"])


@st.composite
def sentences(draw: st.DrawFn) -> str:
    ws = draw(st.lists(st.one_of(words, words, words, odd_words), min_size=1, max_size=10))
    ws[0] = draw(words).capitalize()
    if len(ws) > 2 and draw(st.booleans()):
        ws[1] += ","
    return " ".join(ws) + draw(st.sampled_from([".", ".", "!", "?", "..."]))


@st.composite
def prose(draw: st.DrawFn, min_sentences: int = 1, max_sentences: int = 8) -> str:
    """Sentences joined by spaces, newlines or blank lines (re-segments to the same list)."""
    sents = draw(st.lists(sentences(), min_size=min_sentences, max_size=max_sentences))
    out = sents[0]
    for s in sents[1:]:
        out += draw(st.sampled_from([" ", " ", "  ", "\n", "\n\n"])) + s
    return out + draw(st.sampled_from(["", "\n", " "]))


code_bodies = st.text(
    alphabet=st.characters(exclude_characters="`\r", exclude_categories=["Cs"]), max_size=60
)


@st.composite
def markdown(draw: st.DrawFn) -> str:
    """Light markdown: paragraphs, bullets, numbered items, headings, code fences, inline code."""
    blocks = []
    for kind in draw(
        st.lists(
            st.sampled_from(["para", "bullet", "number", "heading", "fence", "inline"]),
            min_size=1,
            max_size=7,
        )
    ):
        if kind == "para":
            blocks.append(draw(prose(max_sentences=4)).strip())
        elif kind == "bullet":
            blocks.append("- " + draw(prose(max_sentences=2)).strip().replace("\n", " "))
        elif kind == "number":
            n = draw(st.integers(1, 12))
            body = draw(prose(max_sentences=2)).strip().replace("\n", " ")
            blocks.append(f"{n}. **{draw(words).capitalize()}**: {body}")
        elif kind == "heading":
            blocks.append("#" * draw(st.integers(1, 4)) + " " + draw(words).capitalize())
        elif kind == "fence":
            blocks.append("```" + draw(st.sampled_from(["", "python", "bash"])) + "\n")
            blocks[-1] += draw(code_bodies) + "\n```"
        else:
            blocks.append(f"Run `{draw(code_bodies.filter(lambda s: s.strip() != ''))}` now.")
            blocks[-1] = blocks[-1].replace("\n", " ")
    return "\n".join(blocks) + "\n"


#: anything at all, to check robustness
any_text = st.text(max_size=300)
texts = st.one_of(prose(), markdown(), any_text)


def osa_distance(a: str, b: str) -> int:
    """Optimal string alignment distance (Levenshtein + adjacent transposition)."""
    d = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        d[i][0] = i
    for j in range(len(b) + 1):
        d[0][j] = j
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            cost = a[i - 1] != b[j - 1]
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[len(a)][len(b)]


def check_result(text: str, result: PerturbResult, *, level: str) -> None:
    """Invariants every result must satisfy.

    The output differs from the input and is exactly the input with the recorded edits applied;
    edits are sorted, disjoint and real changes. Character and word rules never touch a
    protected region; sentence rules never touch a fenced code block.
    """
    assert result.text != text
    assert apply_edits(text, result.edits) == result.text
    assert result.edits
    pos = -1
    seg = segment(text)
    for e in result.edits:
        assert e.start >= pos
        pos = e.end
        assert text[e.start : e.end] == e.old
        assert e.old != e.new
        if level in ("character", "word"):
            assert not seg.overlaps_protected(e.start, e.end), (e, seg.protected)
        elif level == "sentence" and e.end - e.start < len(text):
            for cs, ce in seg.code:
                assert e.end <= cs or e.start >= ce, (e, seg.code)


def alnum_deleted(original: str, perturbed: str) -> int:
    """Number of characters deleted if ``perturbed`` is ``original`` minus some alphanumeric
    characters (and nothing else); raise AssertionError otherwise.

    Non-alphanumeric characters cannot be deleted, so they align one to one: the texts must
    have the same non-alphanumeric skeleton, and between two skeleton characters the perturbed
    run of alphanumerics must be a subsequence of the original run.
    """

    def runs(t: str) -> tuple[list[str], list[str]]:
        skeleton, alnum_runs, cur = [], [], []
        for c in t:
            if c.isalnum():
                cur.append(c)
            else:
                alnum_runs.append("".join(cur))
                cur = []
                skeleton.append(c)
        alnum_runs.append("".join(cur))
        return skeleton, alnum_runs

    sk1, r1 = runs(original)
    sk2, r2 = runs(perturbed)
    assert sk1 == sk2, "a non-alphanumeric character was deleted or changed"
    for a, b in zip(r1, r2, strict=True):
        it = iter(a)
        assert all(c in it for c in b), f"{b!r} is not a subsequence of {a!r}"
    return len(original) - len(perturbed)


def multiset(xs: list[str]) -> Counter[str]:
    return Counter(xs)
