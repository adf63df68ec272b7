"""Sentence-level rule-based kinds.

Sentences are the prose sentences of :mod:`.segmentation` (headings, table rows and code are
never sentences, so they never move). Reordering kinds move sentence texts between the
sentence slots and leave every separator (spaces, newlines, list markers) where it was.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence

from .base import (
    Edit,
    PerturbationNotApplicable,
    PerturbResult,
    apply_edits,
    make_rng,
    require_count,
)
from .segmentation import Segmentation, Span, segment

__all__ = [
    "random_answer",
    "random_ending",
    "sentence_deletion",
    "sentence_exchange",
    "sentence_reordering",
    "wrong_ending",
]

_HSPACE = " \t"
_SHUFFLE_TRIES = 50
_RANDOM_DRAWS = 64


# --- reordering ------------------------------------------------------------------------------


def _reorder(rule: str, text: str, seed: int, k: int | str) -> PerturbResult:
    rng = make_rng(seed)
    seg = segment(text)
    spans = seg.sentences
    texts = [text[s:e] for s, e in spans]
    n = len(spans)
    if k == "all":
        size = n
    elif isinstance(k, int) and not isinstance(k, bool):
        size = require_count(rule, "k", k, minimum=2)
    else:
        raise ValueError(f'{rule}: k must be an int >= 2 or "all", got {k!r}')
    if n < 2:
        raise PerturbationNotApplicable(rule, f"needs at least 2 sentences, the text has {n}")
    if size > n:
        raise PerturbationNotApplicable(rule, f"needs {size} sentences, the text has {n}")
    if len(set(texts)) < 2:
        raise PerturbationNotApplicable(rule, "all sentences are identical")

    # choose the slots: two with different sentences (so a change is possible), then the rest
    i = rng.randrange(n)
    j = rng.choice([x for x in range(n) if texts[x] != texts[i]])
    others = [x for x in range(n) if x not in (i, j)]
    slots = sorted([i, j, *rng.sample(others, size - 2)])

    # shuffle the chosen sentences until the text changes (fallback: swap i and j)
    moved = list(slots)
    for _ in range(_SHUFFLE_TRIES):
        rng.shuffle(moved)
        if any(texts[a] != texts[b] for a, b in zip(slots, moved, strict=True)):
            break
    else:  # pragma: no cover - needs 50 identity draws in a row
        moved = [j if x == i else i if x == j else x for x in slots]
    order = list(range(n))
    for slot, src in zip(slots, moved, strict=True):
        order[slot] = src
    edits = [
        Edit(spans[p].start, spans[p].end, texts[p], texts[order[p]])
        for p in range(n)
        if texts[order[p]] != texts[p]
    ]
    params = {"rule": rule, "seed": seed, "k": k, "slots": slots, "order": order}
    return PerturbResult(apply_edits(text, edits), params, tuple(edits))


def sentence_reordering(text: str, *, seed: int, k: int | str) -> PerturbResult:
    """Shuffle ``k`` sentences (DHP: ``k=2`` minor, ``k="all"`` major).

    ``k`` slots are drawn (two of them holding different sentences) and their sentences are
    shuffled until the text changes. ``params["order"][p]`` is the index of the original
    sentence now in slot ``p``.
    """
    return _reorder("sentence_reordering", text, seed, k)


def sentence_exchange(text: str, *, seed: int) -> PerturbResult:
    """Swap two sentences with different texts (Hu et al., Coherence)."""
    return _reorder("sentence_exchange", text, seed, 2)


# --- deletion --------------------------------------------------------------------------------


def _deletion_region(seg: Segmentation, span: Span) -> Span:
    """What to cut to delete a sentence: the sentence and one adjacent run of spaces, or its
    whole line when the sentence is the only thing on it (besides a list marker)."""
    text = seg.text
    s, e = span
    n = len(text)
    line_start = text.rfind("\n", 0, s) + 1
    nl = text.find("\n", e)
    line_end = n if nl < 0 else nl
    before, after = text[line_start:s], text[e:line_end]
    marker_only = not before.strip() or all(
        c.isspace() or seg.overlaps_protected(line_start + x, line_start + x + 1)
        for x, c in enumerate(before)
    )
    if marker_only and not after.strip():
        if line_end < n:
            return Span(line_start, line_end + 1)
        return Span(max(line_start - 1, 0), n)
    if e < n and text[e] in _HSPACE:
        while e < n and text[e] in _HSPACE:
            e += 1
    elif s > 0 and text[s - 1] in _HSPACE:
        while s > 0 and text[s - 1] in _HSPACE and not seg.overlaps_protected(s - 1, s):
            s -= 1
    return Span(s, e)


def sentence_deletion(text: str, *, seed: int, k: int = 1) -> PerturbResult:
    """Delete ``k`` sentences (Hu et al., Informativeness); at least one sentence must remain.

    A sentence is cut with one adjacent run of spaces; a sentence alone on its line (list item
    included) takes the whole line with it.
    """
    rule = "sentence_deletion"
    require_count(rule, "k", k)
    rng = make_rng(seed)
    seg = segment(text)
    n = len(seg.sentences)
    if n < k + 1:
        raise PerturbationNotApplicable(
            rule, f"deleting {k} sentence(s) needs at least {k + 1}, the text has {n}"
        )
    chosen = sorted(rng.sample(range(n), k))
    regions = sorted(_deletion_region(seg, seg.sentences[i]) for i in chosen)
    merged: list[Span] = []
    for r in regions:
        if merged and r.start <= merged[-1].end:
            merged[-1] = Span(merged[-1].start, max(r.end, merged[-1].end))
        else:
            merged.append(r)
    edits = [Edit(s, e, text[s:e], "") for s, e in merged]
    params = {"rule": rule, "seed": seed, "k": k, "sentences": chosen}
    return PerturbResult(apply_edits(text, edits), params, tuple(edits))


# --- endings and answers from elsewhere ------------------------------------------------------


def _draw(rng: random.Random, size: int) -> Iterator[int]:
    """Candidate pool indices: a few random draws, then every index in a random order."""
    for _ in range(min(_RANDOM_DRAWS, size)):
        yield rng.randrange(size)
    rest = list(range(size))
    rng.shuffle(rest)
    yield from rest


def _last_sentence(rule: str, seg: Segmentation) -> Span:
    if not seg.sentences:
        raise PerturbationNotApplicable(rule, "the text has no sentence")
    return seg.sentences[-1]


def random_ending(text: str, *, seed: int, pool: Sequence[str]) -> PerturbResult:
    """Replace the last sentence by the last sentence of a random text of ``pool``.

    ``pool`` holds the other items of the same dataset; entries equal to ``text`` (after
    stripping) or whose ending equals this one are skipped. ``params["source_index"]`` is the
    pool index used.
    """
    rule = "random_ending"
    rng = make_rng(seed)
    seg = segment(text)
    last = _last_sentence(rule, seg)
    old = text[last.start : last.end]
    own = text.strip()
    if pool:
        for idx in _draw(rng, len(pool)):
            cand = pool[idx]
            if not cand.strip() or cand.strip() == own:
                continue
            cseg = segment(cand)
            if not cseg.sentences:
                continue
            cs, ce = cseg.sentences[-1]
            new = cand[cs:ce]
            if new != old:
                edit = Edit(last.start, last.end, old, new)
                params = {"rule": rule, "seed": seed, "source_index": idx}
                return PerturbResult(apply_edits(text, [edit]), params, (edit,))
    raise PerturbationNotApplicable(rule, "no text in the pool has a different ending")


def random_answer(text: str, *, seed: int, pool: Sequence[str]) -> PerturbResult:
    """Replace the whole text by a random text of ``pool`` (an answer to another question).

    Entries that are empty or equal to ``text`` (after stripping) are skipped.
    """
    rule = "random_answer"
    rng = make_rng(seed)
    own = text.strip()
    if pool:
        for idx in _draw(rng, len(pool)):
            cand = pool[idx]
            if cand.strip() and cand.strip() != own:
                edit = Edit(0, len(text), text, cand)
                params = {"rule": rule, "seed": seed, "source_index": idx}
                return PerturbResult(cand, params, (edit,))
    raise PerturbationNotApplicable(rule, "no different, non-empty text in the pool")


def wrong_ending(text: str, *, seed: int, wrong_ending: str) -> PerturbResult:
    """Replace the last sentence by ``wrong_ending`` (e.g. Story Cloze's wrong ending).

    ``seed`` is accepted for the common signature and recorded, but nothing is random.
    """
    rule = "wrong_ending"
    make_rng(seed)
    seg = segment(text)
    last = _last_sentence(rule, seg)
    old = text[last.start : last.end]
    new = wrong_ending.strip()
    if not new:
        raise PerturbationNotApplicable(rule, "the wrong ending is empty")
    if new == old:
        raise PerturbationNotApplicable(rule, "the wrong ending equals the current ending")
    edit = Edit(last.start, last.end, old, new)
    params = {"rule": rule, "seed": seed}
    return PerturbResult(apply_edits(text, [edit]), params, (edit,))
