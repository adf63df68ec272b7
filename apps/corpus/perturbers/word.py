"""Word-level rule-based kinds: adjacent word exchange, consecutive word-span deletion."""

from __future__ import annotations

from .base import (
    Edit,
    PerturbationNotApplicable,
    PerturbResult,
    apply_edits,
    make_rng,
    require_count,
)
from .segmentation import Segmentation, segment, tokenize_words

__all__ = [
    "exchange_pairs",
    "max_disjoint_pairs",
    "span_starts",
    "word_exchange",
    "word_span_deletion",
]

_HSPACE = " \t"


# --- word exchange (Hu et al., Grammaticality) -----------------------------------------------


def exchange_pairs(text: str) -> list[int]:
    """Indices i such that words i and i+1 can be swapped.

    The two words are separated by spaces/tabs only (same line, no punctuation or markup
    between them) and differ, so swapping them changes the text.
    """
    return list(segment(text).adjacent_pairs)


def max_disjoint_pairs(pairs: list[int]) -> list[int]:
    """A largest set of non-overlapping pairs (greedy from the left is optimal here)."""
    out: list[int] = []
    for i in sorted(pairs):
        if not out or i > out[-1] + 1:
            out.append(i)
    return out


def word_exchange(text: str, *, seed: int, k: int) -> PerturbResult:
    """Swap ``k`` disjoint pairs of adjacent words (``buy a tablet and`` -> ``buy a and tablet``).

    Only the two words of a pair move; the whitespace between them stays. The multiset of words
    is unchanged.
    """
    rule = "word_exchange"
    require_count(rule, "k", k)
    rng = make_rng(seed)
    pairs = exchange_pairs(text)
    best = max_disjoint_pairs(pairs)
    if len(best) < k:
        raise PerturbationNotApplicable(
            rule, f"needs {k} disjoint pairs of adjacent distinct words, the text has {len(best)}"
        )
    order = list(pairs)
    rng.shuffle(order)
    chosen: list[int] = []
    used: set[int] = set()
    for i in order:
        if i not in used and i + 1 not in used:
            chosen.append(i)
            used.update((i, i + 1))
            if len(chosen) == k:
                break
    if len(chosen) < k:  # the random greedy pass got stuck: sample from a maximum set
        chosen = rng.sample(best, k)
    chosen.sort()
    w = segment(text).words
    edits = []
    for i in chosen:
        a, b = w[i], w[i + 1]
        new = text[b.start : b.end] + text[a.end : b.start] + text[a.start : a.end]
        edits.append(Edit(a.start, b.end, text[a.start : b.end], new))
    params = {"rule": rule, "seed": seed, "k": k, "pairs": chosen}
    return PerturbResult(apply_edits(text, edits), params, tuple(edits))


# --- word-span deletion (DHP, W level) -------------------------------------------------------


def span_starts(text: str, k: int) -> list[int]:
    """Indices i such that words i .. i+k-1 can be deleted as one span."""
    return [i for a, b in segment(text).word_runs for i in range(a, b - k + 1)]


def longest_run(text: str) -> int:
    """The largest k for which :func:`word_span_deletion` applies."""
    return max((b - a for a, b in segment(text).word_runs), default=0)


def word_span_deletion(text: str, *, seed: int, k: int) -> PerturbResult:
    """Delete ``k`` consecutive words.

    The span runs from the first word's start to the last word's end, so it holds the k words
    and what separates them; it never crosses a line break or a protected region (code, URL,
    list marker). One adjacent run of spaces/tabs goes with it (the following one, else the
    preceding one) so no double space is left; all other characters are kept.
    """
    rule = "word_span_deletion"
    require_count(rule, "k", k)
    rng = make_rng(seed)
    seg = segment(text)
    starts = span_starts(text, k)
    if not starts:
        raise PerturbationNotApplicable(
            rule,
            f"needs {k} consecutive words on one line, the longest run has {longest_run(text)}",
        )
    chosen = starts.index(rng.choice(starts))
    words = seg.word_texts()
    # the drawn start, else the next one that works: a span deleted from a line's start can
    # leave "42." there, which then reads as a list marker and is no word any more
    for i in starts[chosen:] + starts[:chosen]:
        edit = _span_edit(text, seg, i, k)
        result = apply_edits(text, [edit])
        if tokenize_words(result) == words[:i] + words[i + k :]:
            params = {"rule": rule, "seed": seed, "k": k, "first_word": i}
            return PerturbResult(result, params, (edit,))
    raise PerturbationNotApplicable(rule, f"every span of {k} words changes the words around it")


def _span_edit(text: str, seg: Segmentation, i: int, k: int) -> Edit:
    """Words i..i+k-1 and one adjacent run of spaces/tabs (the following, else the preceding)."""
    a, b = seg.words[i].start, seg.words[i + k - 1].end
    n = len(text)
    if b < n and text[b] in _HSPACE:
        while b < n and text[b] in _HSPACE and not seg.overlaps_protected(b, b + 1):
            b += 1
    elif a > 0 and text[a - 1] in _HSPACE:
        while a > 0 and text[a - 1] in _HSPACE and not seg.overlaps_protected(a - 1, a):
            a -= 1
    return Edit(a, b, text[a:b], "")
