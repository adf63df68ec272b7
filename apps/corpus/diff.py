"""Word-level diff of an original and a perturbed text, with character-level detail.

Pure Python (stdlib only); no Django imports.

Tokens
    ``tokenize`` splits a text into words (letters/digits, with inner apostrophes and hyphens;
    numbers keep their ``.``/``,`` separators), runs of horizontal whitespace, single line breaks,
    and runs of one repeated punctuation character (so markdown markers such as ``**``, ``##``,
    ``---`` or ``````` stay whole). Every character belongs to exactly one token, so the tokens of
    a text always concatenate back to it: whitespace and newlines are never lost.

Algorithm
    Common leading/trailing tokens are stripped, then an *exact* token-level LCS is computed with
    the bit-parallel algorithm of Allison-Dix / Hyyro (one big-integer row per original token, so
    the inner loop runs in C: about O(n*m/64) machine operations and n*m bits of memory). The
    alignment is read back from the stored rows, giving a minimal edit script. Very large inputs
    (more than ``EXACT_LIMIT`` token pairs) are first cut by patience anchors (tokens that occur
    once in each text), and each gap is diffed the same way.

    The minimal script is then made readable:

    * pure insertions/deletions are slid along repeated tokens to word/line boundaries
      ("the [big ]cat" rather than "the[ big] cat");
    * runs of adjacent changes become one span, and equal runs of spaces between two changes are
      absorbed ("the cat sat" -> "a dog sat" is one replace "the cat" -> "a dog");
    * short equal runs (no newline) squeezed between larger changes are absorbed, as in
      diff-match-patch's semantic clean-up, so a rewritten phrase is not shown as confetti.

    A replace whose two sides are similar (a typo, a changed digit) gets character-level sub-ops.

Output
    ``compute_diff`` returns a JSON-serialisable list of ops::

        {"op": "equal" | "insert" | "delete" | "replace", "a": str, "b": str,
         "chars": [{"op": ..., "a": str, "b": str}, ...]}   # "chars" only on some replaces

    Concatenating the ``a`` sides gives the original exactly, the ``b`` sides the perturbed text
    exactly; ``equal`` ops have ``a == b``; no op has both sides empty. Store ``DIFF_VERSION``
    next to a stored diff and recompute when it differs.

Rendering (text is HTML-escaped; newlines are kept, the page uses ``white-space: pre-wrap``)
    * ``<del class="diff-del">`` / ``<ins class="diff-ins">`` mark changed text;
    * ``<span class="diff-char">`` marks the changed characters inside a replace with detail;
    * whitespace inside changed text is wrapped in ``<span class="diff-ws">`` (style it, e.g.
      ``outline: 1px dotted``); a changed line break is shown as ``<span class="diff-ws">↵</span>``
      followed by the real newline, so whitespace-only changes are visible;
    * side by side, ``<span class="diff-gap"></span>`` marks where the other side has text that
      this side lacks.
"""

from __future__ import annotations

import bisect
import html
import re
from collections.abc import Hashable, Iterable, Sequence
from typing import Any, Literal, NotRequired, TypedDict

__all__ = [
    "DIFF_VERSION",
    "NEWLINE_MARKER",
    "CharOp",
    "DiffOp",
    "compute_diff",
    "diff_payload",
    "diff_stats",
    "render_inline_html",
    "render_side_by_side",
    "tokenize",
]

#: Bump whenever tokenisation, alignment, clean-up or the op format changes; stored diffs with
#: another version must be recomputed.
DIFF_VERSION = 1

#: Above this many (original tokens x perturbed tokens) after trimming, the texts are first cut
#: at patience anchors instead of being aligned in one exact LCS pass (n*m bits of memory).
EXACT_LIMIT = 100_000_000

#: Nesting limit for the anchor splitting of very large inputs.
_MAX_DEPTH = 32

#: Character-level detail is computed for replaces whose sides are at most this long ...
CHAR_DETAIL_MAX_LEN = 200
#: ... and whose changed words are each at least this similar to their counterpart
#: (2 * common chars / total chars) ...
CHAR_DETAIL_MIN_RATIO = 0.5
#: ... or, when the number of words differs, whose sides are this similar as a whole.
CHAR_DETAIL_SPLIT_RATIO = 0.8

#: Longest equal word/punctuation token absorbed into the changes around it.
_MAX_ABSORBED_CHARS = 3

#: How far a pure insertion/deletion may be slid to reach a better boundary.
_MAX_SLIDE = 64

#: Marker shown in front of a changed line break.
NEWLINE_MARKER = "\u21b5"  # ↵

OpName = Literal["equal", "insert", "delete", "replace"]


class CharOp(TypedDict):
    op: OpName
    a: str
    b: str


class DiffOp(TypedDict):
    op: OpName
    a: str
    b: str
    chars: NotRequired[list[CharOp]]


# --------------------------------------------------------------------------- tokenisation

# Letters plus combining marks of common scripts (Python's \w does not include marks, which
# would split e.g. decomposed accents or Devanagari words).
_WORD_CHARS = (
    r"\w\u0300-\u036f\u0483-\u0489\u0591-\u05c7\u0610-\u061a\u064b-\u065f"
    r"\u0900-\u0dff\u0e00-\u0e7f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f"
)
_TOKEN_RE = re.compile(
    r"\r\n|\n|\r"  # one line break
    r"|[^\S\r\n]+"  # a run of horizontal whitespace
    r"|\d+(?:[.,]\d+)+"  # a number with separators: 3.14, 1,000.5
    rf"|[{_WORD_CHARS}]+(?:['\u2019\-][{_WORD_CHARS}]+)*"  # a word: don't, well-known
    r"|([^\w\s])\1*"  # a run of one punctuation character: **, ##, ---, ...
    r"|[\s\S]",  # anything else, one character at a time (never reached in practice)
)
_NEWLINES = frozenset({"\n", "\r", "\r\n"})
_WORDLIKE_RE = re.compile(rf"[{_WORD_CHARS}]")


def tokenize(text: str) -> list[str]:
    """Split ``text`` into tokens; ``"".join(tokenize(text)) == text`` always holds."""
    return [m.group() for m in _TOKEN_RE.finditer(text)]


def _kind(tok: str | None) -> int:
    """0 text edge, 1 line break, 2 horizontal whitespace, 3 punctuation, 4 word."""
    if tok is None:
        return 0
    if tok in _NEWLINES:
        return 1
    if tok.isspace():
        return 2
    if _WORDLIKE_RE.search(tok):
        return 4
    return 3


# --------------------------------------------------------------------------- alignment

_EQ, _DEL, _INS = 0, 1, 2


def _lcs_script(a: Sequence[Hashable], b: Sequence[Hashable]) -> list[int]:
    """Minimal edit script (list of _EQ/_DEL/_INS) turning ``a`` into ``b``.

    Bit-parallel LCS (Allison-Dix; Crochemore et al. 2001; Hyyro 2004): bit j of row i is 0 iff
    LCS(a[:i], b[:j+1]) = LCS(a[:i], b[:j]) + 1. All rows are kept for the trace-back.
    """
    n, m = len(a), len(b)
    positions: dict[Hashable, list[int]] = {}
    for j, tok in enumerate(b):
        positions.setdefault(tok, []).append(j)
    masks: dict[Hashable, int] = {}
    for tok, js in positions.items():
        mask = 0
        for j in js:
            mask |= 1 << j
        masks[tok] = mask
    full = (1 << m) - 1
    row = full
    rows = [row]
    get = masks.get
    for tok in a:
        u = row & get(tok, 0)
        row = ((row + u) | (row - u)) & full
        rows.append(row)
    out: list[int] = []
    i, j = n, m
    while i > 0 and j > 0:
        if a[i - 1] == b[j - 1]:
            out.append(_EQ)
            i -= 1
            j -= 1
        elif (rows[i] >> (j - 1)) & 1:
            out.append(_INS)
            j -= 1
        else:
            out.append(_DEL)
            i -= 1
    out.extend([_DEL] * i)
    out.extend([_INS] * j)
    out.reverse()
    return out


def _patience_anchors(a: Sequence[Hashable], b: Sequence[Hashable]) -> list[tuple[int, int]]:
    """Longest increasing chain of (i, j) with a[i] == b[j] and the token unique in both."""
    count_a: dict[Hashable, int] = {}
    for tok in a:
        count_a[tok] = count_a.get(tok, 0) + 1
    count_b: dict[Hashable, int] = {}
    pos_b: dict[Hashable, int] = {}
    for j, tok in enumerate(b):
        count_b[tok] = count_b.get(tok, 0) + 1
        pos_b[tok] = j
    pairs = [
        (i, pos_b[tok]) for i, tok in enumerate(a) if count_a[tok] == 1 and count_b.get(tok) == 1
    ]
    if not pairs:
        return []
    tails: list[int] = []  # smallest j ending a chain of each length
    tail_idx: list[int] = []
    prev: list[int] = [-1] * len(pairs)
    for k, (_i, j) in enumerate(pairs):
        pos = bisect.bisect_left(tails, j)
        if pos == len(tails):
            tails.append(j)
            tail_idx.append(k)
        else:
            tails[pos] = j
            tail_idx[pos] = k
        prev[k] = tail_idx[pos - 1] if pos else -1
    chain: list[tuple[int, int]] = []
    k = tail_idx[-1]
    while k >= 0:
        chain.append(pairs[k])
        k = prev[k]
    chain.reverse()
    return chain


def _diff_seq(
    a: Sequence[Hashable], b: Sequence[Hashable], limit: int | None = None, depth: int = 0
) -> list[int]:
    """Edit script for a -> b: exact LCS, or patience anchors first for very large inputs."""
    if limit is None:
        limit = EXACT_LIMIT
    n, m = len(a), len(b)
    pre = 0
    while pre < n and pre < m and a[pre] == b[pre]:
        pre += 1
    suf = 0
    while suf < n - pre and suf < m - pre and a[n - 1 - suf] == b[m - 1 - suf]:
        suf += 1
    mid_a, mid_b = a[pre : n - suf], b[pre : m - suf]
    if not mid_a or not mid_b:
        middle = [_DEL] * len(mid_a) + [_INS] * len(mid_b)
    elif len(mid_a) * len(mid_b) <= limit:
        middle = _lcs_script(mid_a, mid_b)
    else:
        anchors = _patience_anchors(mid_a, mid_b) if depth < _MAX_DEPTH else []
        if not anchors:  # nothing to hang an alignment on: show the middle as replaced
            middle = [_DEL] * len(mid_a) + [_INS] * len(mid_b)
        else:
            middle = []
            i0 = j0 = 0
            for i, j in anchors:
                middle.extend(_diff_seq(mid_a[i0:i], mid_b[j0:j], limit, depth + 1))
                middle.append(_EQ)
                i0, j0 = i + 1, j + 1
            middle.extend(_diff_seq(mid_a[i0:], mid_b[j0:], limit, depth + 1))
    return [_EQ] * pre + middle + [_EQ] * suf


# --------------------------------------------------------------------------- readability


def _boundary_score(left: str | None, right: str | None) -> int:
    """How good a place the cut between two tokens is for a change to start or end."""
    kl, kr = _kind(left), _kind(right)
    if kl == 0 or kr == 0:
        return 6
    if kl == 1 or kr == 1:
        return 5 if kl == kr else 4
    if kl == 2 or kr == 2:
        return 2
    if kl == 3 or kr == 3:
        return 1
    return 0


def _slide(tags: list[int], toks: list[str]) -> None:
    """Slide pure insert/delete runs (between equal items) to the best token boundary.

    ``tags``/``toks`` describe the merged edit script item by item: an _EQ item is a token of
    both texts, a _DEL item a token of the original only, an _INS item one of the perturbed
    text only. Rotating a run over equal neighbours only swaps tags (the tokens are equal).
    """
    total = len(tags)
    s = 0
    while s < total:
        tag = tags[s]
        if tag == _EQ:
            s += 1
            continue
        e = s
        while e < total and tags[e] == tag:
            e += 1
        if (s > 0 and tags[s - 1] != _EQ) or (e < total and tags[e] != _EQ):
            s = e  # part of a replace: nothing to slide
            continue
        # slide left as far as the tokens allow
        steps = 0
        while s > 0 and tags[s - 1] == _EQ and toks[s - 1] == toks[e - 1] and steps < _MAX_SLIDE:
            tags[s - 1], tags[e - 1] = tag, _EQ
            s -= 1
            e -= 1
            steps += 1
        best, best_score = 0, -1
        shift = 0
        while True:
            lo, hi = s + shift, e + shift
            score = 2 * (
                _boundary_score(toks[lo - 1] if lo > 0 else None, toks[lo])
                + _boundary_score(toks[hi - 1], toks[hi] if hi < total else None)
            ) + (_kind(toks[lo]) >= 3)  # tie-break: start on content ("big " not " big")
            if score > best_score:
                best, best_score = shift, score
            if hi < total and tags[hi] == _EQ and toks[hi] == toks[lo] and shift < 2 * _MAX_SLIDE:
                shift += 1
            else:
                break
        for k in range(best):
            tags[s + k], tags[e + k] = _EQ, tag
        s = e + best


def _merge_changes(groups: list[list[Any]]) -> list[list[Any]]:
    """Absorb small equal runs between two changes; groups are [is_change, a_toks, b_toks]."""

    def chars(toks: list[str]) -> int:
        return sum(len(t) for t in toks)

    def absorbable(eq: list[str], before: list[Any], after: list[Any]) -> bool:
        if any(t in _NEWLINES for t in eq):
            return False
        content = [t for t in eq if not t.isspace()]
        if not content:
            return True
        # one punctuation mark squeezed between two changes at least as long, or one short
        # word (" the ", " of ") between two changes at least twice as long
        if len(content) > 1 or len(content[0]) > _MAX_ABSORBED_CHARS:
            return False
        size = chars(eq) * (2 if _kind(content[0]) == 4 else 1)
        return size <= max(chars(before[1]), chars(before[2])) and size <= max(
            chars(after[1]), chars(after[2])
        )

    changed = True
    while changed:
        changed = False
        out: list[list[Any]] = []
        k = 0
        while k < len(groups):
            g = groups[k]
            if (
                not g[0]
                and out
                and out[-1][0]
                and k + 1 < len(groups)
                and groups[k + 1][0]
                and absorbable(g[1], out[-1], groups[k + 1])
            ):
                nxt = groups[k + 1]
                prev = out[-1]
                prev[1] = prev[1] + g[1] + nxt[1]
                prev[2] = prev[2] + g[2] + nxt[2]
                k += 2
                changed = True
                continue
            out.append(g)
            k += 1
        groups = out
    return groups


# --------------------------------------------------------------------------- public API


def _char_ops(a: str, b: str) -> list[CharOp]:
    script = _diff_seq(a, b)
    ops: list[CharOp] = []
    i = j = 0
    k = 0
    while k < len(script):
        if script[k] == _EQ:
            start = i
            while k < len(script) and script[k] == _EQ:
                i += 1
                j += 1
                k += 1
            ops.append({"op": "equal", "a": a[start:i], "b": a[start:i]})
            continue
        si, sj = i, j
        while k < len(script) and script[k] != _EQ:
            if script[k] == _DEL:
                i += 1
            else:
                j += 1
            k += 1
        da, db = a[si:i], b[sj:j]
        ops.append(
            {"op": "replace" if da and db else "delete" if da else "insert", "a": da, "b": db}
        )
    return ops


def _change_op(a: str, b: str) -> DiffOp:
    if not a:
        return {"op": "insert", "a": "", "b": b}
    if not b:
        return {"op": "delete", "a": a, "b": ""}
    return {"op": "replace", "a": a, "b": b}


def _similar(a: str, b: str, min_ratio: float) -> list[CharOp] | None:
    """Character ops for ``a`` -> ``b`` if they share enough characters, else None."""
    chars = _char_ops(a, b)
    common = sum(len(c["a"]) for c in chars if c["op"] == "equal")
    return chars if 2 * common >= min_ratio * (len(a) + len(b)) else None


def _maybe_char_detail(op: DiffOp) -> None:
    """Attach character-level ops to a replace of similar words (typos, changed digits)."""
    a, b = op["a"], op["b"]
    if len(a) > CHAR_DETAIL_MAX_LEN or len(b) > CHAR_DETAIL_MAX_LEN:
        return
    words_a = [t for t in tokenize(a) if not t.isspace()]
    words_b = [t for t in tokenize(b) if not t.isspace()]
    if len(words_a) == len(words_b):
        # word by word: every changed word must resemble its counterpart
        if not all(
            x == y or _similar(x, y, CHAR_DETAIL_MIN_RATIO) is not None
            for x, y in zip(words_a, words_b, strict=True)
        ):
            return
        chars = _similar(a, b, CHAR_DETAIL_MIN_RATIO)
    else:  # words split or joined ("well-known" / "well known"): only if nearly identical
        chars = _similar(a, b, CHAR_DETAIL_SPLIT_RATIO)
    if chars is not None:
        op["chars"] = chars


def compute_diff(original: str, perturbed: str) -> list[DiffOp]:
    """Diff two texts; see the module docstring for the op format and guarantees."""
    if original == perturbed:
        return [{"op": "equal", "a": original, "b": original}] if original else []
    toks_a = tokenize(original)
    toks_b = tokenize(perturbed)
    ids: dict[str, int] = {}
    ia = [ids.setdefault(t, len(ids)) for t in toks_a]
    ib = [ids.setdefault(t, len(ids)) for t in toks_b]
    script = _diff_seq(ia, ib)

    toks: list[str] = []
    i = j = 0
    for tag in script:
        if tag == _INS:
            toks.append(toks_b[j])
            j += 1
        else:
            toks.append(toks_a[i])
            i += 1
            if tag == _EQ:
                j += 1
    _slide(script, toks)

    groups: list[list[Any]] = []
    for tag, tok in zip(script, toks, strict=True):
        is_change = tag != _EQ
        if not groups or groups[-1][0] != is_change:
            groups.append([is_change, [], []])
        g = groups[-1]
        if tag != _INS:
            g[1].append(tok)
        if tag != _DEL:
            g[2].append(tok)
    groups = _merge_changes(groups)

    ops: list[DiffOp] = []
    for is_change, ga, gb in groups:
        a, b = "".join(ga), "".join(gb)
        if not is_change or a == b:
            if ops and ops[-1]["op"] == "equal":
                ops[-1]["a"] += a
                ops[-1]["b"] += a
            else:
                ops.append({"op": "equal", "a": a, "b": a})
            continue
        op = _change_op(a, b)
        if op["op"] == "replace":
            _maybe_char_detail(op)
        ops.append(op)
    return ops


def diff_payload(original: str, perturbed: str) -> dict[str, Any]:
    """``{"version": DIFF_VERSION, "ops": [...]}``, ready to be stored as JSON."""
    return {"version": DIFF_VERSION, "ops": compute_diff(original, perturbed)}


def diff_stats(ops: Iterable[DiffOp]) -> dict[str, Any]:
    """Size of a diff.

    Counts are over non-whitespace tokens (words and punctuation); ``words_*`` over words only.
    In a replace, ``min(words on each side)`` words count as replaced and the excess as inserted
    or deleted. ``edit_size`` is the token-level edit size normalised by the original's token
    count: the sum over changed spans of ``max(tokens removed, tokens added)`` divided by the
    number of original tokens (0 for identical texts; may exceed 1 for large insertions).
    ``whitespace_only`` is true when something changed but only in whitespace.
    """
    words_inserted = words_deleted = words_replaced = 0
    tokens_a = tokens_b = changed_a = changed_b = edit_tokens = 0
    spans = ws_spans = 0
    for op in ops:
        ta = [t for t in tokenize(op["a"]) if not t.isspace()]
        tb = [t for t in tokenize(op["b"]) if not t.isspace()]
        tokens_a += len(ta)
        tokens_b += len(tb)
        if op["op"] == "equal":
            continue
        spans += 1
        if not ta and not tb:
            ws_spans += 1
        changed_a += len(ta)
        changed_b += len(tb)
        edit_tokens += max(len(ta), len(tb))
        wa = sum(1 for t in ta if _WORDLIKE_RE.search(t))
        wb = sum(1 for t in tb if _WORDLIKE_RE.search(t))
        replaced = min(wa, wb)
        words_replaced += replaced
        words_deleted += wa - replaced
        words_inserted += wb - replaced
    return {
        "changed_spans": spans,
        "whitespace_spans": ws_spans,
        "whitespace_only": spans > 0 and ws_spans == spans,
        "words_inserted": words_inserted,
        "words_deleted": words_deleted,
        "words_replaced": words_replaced,
        "tokens_original": tokens_a,
        "tokens_perturbed": tokens_b,
        "tokens_changed_original": changed_a,
        "tokens_changed_perturbed": changed_b,
        "edit_size": edit_tokens / tokens_a if tokens_a else float(edit_tokens > 0),
    }


# --------------------------------------------------------------------------- rendering

_WS_RUN_RE = re.compile(r"(\r\n|\n|\r)|([^\S\r\n]+)")


def _changed_text(text: str) -> str:
    """Escape text inside a change, making whitespace visible."""
    out: list[str] = []
    pos = 0
    for m in _WS_RUN_RE.finditer(text):
        out.append(html.escape(text[pos : m.start()]))
        if m.group(1):
            out.append(f'<span class="diff-ws">{NEWLINE_MARKER}</span>{m.group(1)}')
        else:
            out.append(f'<span class="diff-ws">{m.group(2)}</span>')
        pos = m.end()
    out.append(html.escape(text[pos:]))
    return "".join(out)


def _side(op: DiffOp, side: Literal["a", "b"]) -> str:
    """One side of a change, with its character-level detail if any."""
    chars = op.get("chars")
    if not chars:
        return _changed_text(op[side])
    parts: list[str] = []
    for c in chars:
        text = c[side]
        if not text:
            continue
        if c["op"] == "equal":
            parts.append(_changed_text(text))
        else:
            parts.append(f'<span class="diff-char">{_changed_text(text)}</span>')
    return "".join(parts)


def render_inline_html(ops: Iterable[DiffOp]) -> str:
    """One HTML string: deletions in ``<del>``, insertions in ``<ins>``, in reading order."""
    parts: list[str] = []
    for op in ops:
        kind = op["op"]
        if kind == "equal":
            parts.append(html.escape(op["a"]))
            continue
        if op["a"]:
            parts.append(f'<del class="diff-del">{_side(op, "a")}</del>')
        if op["b"]:
            parts.append(f'<ins class="diff-ins">{_side(op, "b")}</ins>')
    return "".join(parts)


_GAP = '<span class="diff-gap"></span>'


def render_side_by_side(ops: Iterable[DiffOp]) -> tuple[str, str]:
    """``(original_html, perturbed_html)``: deletions marked on the left, insertions right."""
    left: list[str] = []
    right: list[str] = []
    for op in ops:
        if op["op"] == "equal":
            text = html.escape(op["a"])
            left.append(text)
            right.append(text)
            continue
        left.append(f'<del class="diff-del">{_side(op, "a")}</del>' if op["a"] else _GAP)
        right.append(f'<ins class="diff-ins">{_side(op, "b")}</ins>' if op["b"] else _GAP)
    return "".join(left), "".join(right)
