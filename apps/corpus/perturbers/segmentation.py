"""Offline sentence splitting and word tokenization, with character offsets.

No model, no download: hand-written regular expressions tuned for LLM answers and NLG
references, i.e. plain prose and light markdown. Everything is returned as :class:`Span`
(start, end) offsets into the untouched input, so perturbers edit the text in place and every
byte they do not target stays identical (whitespace and newlines included).

What the splitter knows about:

* **Protected regions** (never split, never altered by any character or word perturber):
  fenced code blocks (````` ``` ````` or ``~~~``, indented or inside list items, unclosed fences run
  to the end of the text), inline code spans (any backtick run, per CommonMark, so a one-line
  ````` ```json {...} ``` ````` is inline code), URLs and e-mail addresses, and the structural
  prefix of a markdown line (indentation, ``>`` quotes, ``#`` heading marks, ``-``/``*``/``+``
  bullets, ``1.``/``1)``/``a)`` numbers, ``[ ]`` check boxes).
* **Lines**: a newline ends a sentence, except that a line starting with a lower-case letter
  continues the previous prose line when that line did not end with ``. ! ? : ;`` (hard-wrapped
  prose). Headings, table rows (``|``), horizontal rules and blank lines are not prose: they hold
  words but no sentences. Flattened markdown (newlines turned into double spaces, as in some FBI
  answers): a heading line ends at its first run of 2+ spaces, the rest of the line is prose.
* **Sentence ends**: ``.``, ``!``, ``?``, ``…`` (and runs such as ``?!`` or ``...``), with any
  closing quotes, brackets or emphasis marks, followed by whitespace and then something that is
  not a lower-case letter (a lower-case letter is accepted in an all-lower-case document: first
  letter lower-case and most sentence ends followed by lower case). No split after
  abbreviations (``Dr.``, ``e.g.``, ``i.e.``, ``et al.``, ``vs.`` ...), single-letter initials
  (``F. Scott``), dotted acronyms (``U.S.``, ``a.m.``), ``No.``/``p.``/``Fig.``/``Jan.`` before
  a number, nor before ``(`` right after a closing quote (a citation). ``etc.`` ends a sentence
  when a capital follows. Decimals (``3.14``) and thousands (``1,000``) never split because a
  sentence end needs whitespace after it.
* **Words**: runs of letters/digits, joined through ``. ' - / & _`` or U+2019 between two
  letters/digits and ``,`` between two digits (``3.14``, ``1,000``, ``U.S``, ``don't``,
  ``well-known``). Punctuation and markdown marks are not part of words. Only unprotected words
  are returned.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import NamedTuple

__all__ = [
    "Segmentation",
    "Span",
    "alnum_positions",
    "protected_spans",
    "segment",
    "sentence_spans",
    "split_sentences",
    "tokenize_words",
    "word_spans",
]


class Span(NamedTuple):
    start: int
    end: int


# --- regular expressions ---------------------------------------------------------------------

_FENCE_OPEN = re.compile(
    r"[ \t]*(?:>[ \t]?)*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+)?(?P<fence>`{3,}|~{3,})(?P<info>[^\n]*)"
)
_FENCE_CLOSE = re.compile(r"[ \t]*(?:>[ \t]?)*(?P<fence>`{3,}|~{3,})[ \t\r]*")
_PREFIX = re.compile(
    r"[ \t]*(?:>[ \t]?)*[ \t]*"
    r"(?P<heading>#{1,6}(?=[ \t]|$)[ \t]*)?"
    r"(?:(?:[-*+•]|\(?\d{1,3}[.)]|\(?[A-Za-z]\))[ \t]+(?:\[[ xX]\][ \t]+)?)?"
)
_HRULE = re.compile(r"[ \t]*(?:(?:[-*_])(?:[ \t]*[-*_]){2,}|=+)[ \t\r]*")
_INLINE_CODE = re.compile(r"(?<!`)(`+)(?!`)((?:(?!\n[ \t]*\n)[\s\S])+?)(?<!`)\1(?!`)")
_URL = re.compile(
    r"(?:\b(?:https?|ftp)://|\bwww\.)[^\s<>\"'`\[\](){}]+"
    r"|\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
)
_WORD = re.compile(r"[^\W_]+(?:(?:[.'\u2019\-/&_]|(?<=\d),(?=\d))[^\W_]+)*")
_TERMINAL = re.compile(r"(?:[.!?]|…)+(?P<close>[\"'\u201d\u2019»)\]*_]*)(?=\s)")
_ACRONYM = re.compile(r"(?:[A-Za-z]\.)+[A-Za-z]")
_FLATTENED_BREAK = re.compile(r"[ \t]{2,}(?=\S)")
_LOWER_START = re.compile(r"[.!?…][\"'\u201d\u2019)\]*_]*\s+[a-z]")
_UPPER_START = re.compile(r"[.!?…][\"'\u201d\u2019)\]*_]*\s+[A-Z0-9]")

_QUOTES = "\"'\u201d\u2019»"
_LEAD_STRIP = "([{\"'\u201c\u2018«*_`"
_SENTENCE_END_CHARS = ".!?:;…"

#: lower-cased tokens (without the final period) after which a period never ends a sentence
NO_SPLIT_ABBREVIATIONS = frozenset(
    [
        "mr",
        "mrs",
        "ms",
        "mx",
        "dr",
        "prof",
        "sr",
        "jr",
        "st",
        "mt",
        "ft",
        "rev",
        "hon",
        "gen",
        "col",
        "lt",
        "sgt",
        "capt",
        "cmdr",
        "gov",
        "sen",
        "rep",
        "pres",
        "supt",
        "vs",
        "v",
        "e.g",
        "i.e",
        "cf",
        "al",
        "approx",
        "ca",
        "viz",
        "resp",
        "esp",
        "incl",
        "dept",
        "univ",
        "assn",
        "bros",
    ]
)
#: ... and these only when a number follows (No. 5, p. 12, Fig. 3, Jan. 5)
NO_SPLIT_BEFORE_NUMBER = frozenset(
    [
        "no",
        "nos",
        "nr",
        "p",
        "pp",
        "vol",
        "vols",
        "fig",
        "figs",
        "eq",
        "eqs",
        "ch",
        "chap",
        "sec",
        "sect",
        "art",
        "op",
        "ref",
        "refs",
        "tab",
        "para",
        "pt",
        "jan",
        "feb",
        "mar",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
    ]
)


# --- the segmentation ------------------------------------------------------------------------


@dataclass(frozen=True)
class Segmentation:
    """Offsets of everything a perturber may need, for one text.

    ``protected`` is sorted and merged; ``code`` holds the fenced code blocks only (a subset of
    ``protected``, which sentence-level perturbers must never move or delete); ``sentences`` are
    prose sentences trimmed of surrounding whitespace; ``words`` are unprotected word tokens.
    """

    text: str
    protected: tuple[Span, ...]
    code: tuple[Span, ...]
    markers: tuple[Span, ...]
    words: tuple[Span, ...]
    sentences: tuple[Span, ...]

    def word_texts(self) -> list[str]:
        return [self.text[s:e] for s, e in self.words]

    def sentence_texts(self) -> list[str]:
        return [self.text[s:e] for s, e in self.sentences]

    @cached_property
    def _protected_starts(self) -> list[int]:
        return [s for s, _ in self.protected]

    def overlaps_protected(self, start: int, end: int) -> bool:
        """Whether [start, end) intersects a protected span (an empty range never does)."""
        if start >= end:
            return False
        i = bisect.bisect_left(self._protected_starts, end) - 1
        return i >= 0 and self.protected[i].end > start

    @cached_property
    def gaps(self) -> tuple[Span, ...]:
        """The unprotected stretches of the text, in order."""
        out: list[Span] = []
        pos = 0
        for s, e in self.protected:
            if s > pos:
                out.append(Span(pos, s))
            pos = max(pos, e)
        if pos < len(self.text):
            out.append(Span(pos, len(self.text)))
        return tuple(out)

    @cached_property
    def alnum_positions(self) -> tuple[int, ...]:
        """Offsets of unprotected alphanumeric characters (``str.isalnum``)."""
        text = self.text
        return tuple(i for s, e in self.gaps for i in range(s, e) if text[i].isalnum())

    # derived word analyses, cached here so presets and perturbers share them

    @cached_property
    def ascii_word_indices(self) -> tuple[int, ...]:
        """Indices of words made of ASCII characters only."""
        text = self.text
        return tuple(i for i, (s, e) in enumerate(self.words) if text[s:e].isascii())

    @cached_property
    def alpha_word_indices(self) -> tuple[int, ...]:
        """Indices of alphabetic words of 3 or more letters."""
        text = self.text
        return tuple(i for i, (s, e) in enumerate(self.words) if e - s >= 3 and text[s:e].isalpha())

    @cached_property
    def adjacent_pairs(self) -> tuple[int, ...]:
        """Indices i such that words i and i+1 differ and only spaces/tabs separate them."""
        text, w = self.text, self.words
        out = []
        for i in range(len(w) - 1):
            (s1, e1), (s2, e2) = w[i], w[i + 1]
            if s2 > e1 and not text[e1:s2].strip(" \t") and text[s1:e1] != text[s2:e2]:
                out.append(i)
        return tuple(out)

    @cached_property
    def word_runs(self) -> tuple[tuple[int, int], ...]:
        """Maximal runs [i, j) of words on one line with nothing protected between them."""
        text, w = self.text, self.words
        runs: list[tuple[int, int]] = []
        start = 0
        for i in range(1, len(w) + 1):
            if i == len(w) or (
                "\n" in text[w[i - 1].end : w[i].start]
                or self.overlaps_protected(w[i - 1].end, w[i].start)
            ):
                if i > start:
                    runs.append((start, i))
                start = i
        return tuple(runs)


def _merge(spans: list[Span]) -> tuple[Span, ...]:
    spans = sorted(s for s in spans if s.end > s.start)
    merged: list[Span] = []
    for s in spans:
        if merged and s.start <= merged[-1].end:
            if s.end > merged[-1].end:
                merged[-1] = Span(merged[-1].start, s.end)
        else:
            merged.append(s)
    return tuple(merged)


class _Line(NamedTuple):
    start: int  # offset of the line
    content_start: int  # after the structural prefix
    content_end: int  # before trailing whitespace
    kind: str  # prose | heading | table | rule | blank | code
    has_marker: bool


def _scan_lines(text: str) -> tuple[list[_Line], list[Span], list[Span]]:
    """Classify lines; return them with the fenced code spans and the marker spans."""
    lines: list[_Line] = []
    code: list[Span] = []
    markers: list[Span] = []
    pos = 0
    fence: tuple[str, int, int] | None = None  # (char, length, start offset)
    n = len(text)
    while pos <= n:
        nl = text.find("\n", pos)
        end = n if nl < 0 else nl
        line = text[pos:end]
        if fence is not None:
            m = _FENCE_CLOSE.fullmatch(line)
            if m and m.group("fence")[0] == fence[0] and len(m.group("fence")) >= fence[1]:
                code.append(Span(fence[2], pos + len(line.rstrip())))
                fence = None
            lines.append(_Line(pos, pos, pos, "code", False))
        else:
            m = _FENCE_OPEN.match(line)
            if m and not (m.group("fence")[0] == "`" and "`" in m.group("info")):
                fence = (m.group("fence")[0], len(m.group("fence")), pos + m.start("fence"))
                lines.append(_Line(pos, pos, pos, "code", False))
            elif not line.strip():
                lines.append(_Line(pos, pos, pos, "blank", False))
            elif _HRULE.fullmatch(line):
                lines.append(_Line(pos, pos, pos, "rule", False))
            else:
                p = _PREFIX.match(line)
                assert p is not None  # the pattern can match the empty string
                stripped = line.rstrip()
                cstart = pos + p.end()
                cend = pos + len(stripped)
                if cend < cstart:  # a line holding only a marker
                    cend = cstart
                prefix = line[: p.end()]
                has_marker = bool(prefix.strip())
                if has_marker:
                    first = len(prefix) - len(prefix.lstrip())
                    markers.append(Span(pos + first, cstart))
                content = text[cstart:cend]
                if p.group("heading") is not None:
                    # flattened markdown ("### Title  The text goes on..."): the heading ends
                    # at the first run of 2+ spaces and the rest of the line is prose
                    gap = _FLATTENED_BREAK.search(content)
                    if gap is None:
                        lines.append(_Line(pos, cstart, cend, "heading", has_marker))
                    else:
                        lines.append(_Line(pos, cstart, cstart + gap.start(), "heading", True))
                        lines.append(_Line(pos, cstart + gap.end(), cend, "prose", False))
                else:
                    kind = "table" if content.startswith("|") else "prose"
                    lines.append(_Line(pos, cstart, cend, kind, has_marker))
        if nl < 0:
            break
        pos = nl + 1
    if fence is not None:
        code.append(Span(fence[2], n))
    return lines, code, markers


def _inline_protected(text: str, code: list[Span]) -> list[Span]:
    """Inline code spans, URLs and e-mail addresses outside fenced code blocks."""
    out: list[Span] = []
    pos = 0
    regions: list[Span] = []
    for s, e in code:
        regions.append(Span(pos, s))
        pos = e
    regions.append(Span(pos, len(text)))
    for rs, re_ in regions:
        if rs >= re_:
            continue
        if "`" in text[rs:re_]:
            out.extend(Span(m.start(), m.end()) for m in _INLINE_CODE.finditer(text, rs, re_))
        for m in _URL.finditer(text, rs, re_):
            end = m.end()
            while end > m.start() and text[end - 1] in ".,;:!?":
                end -= 1
            out.append(Span(m.start(), end))
    return out


def _lowercase_document(text: str) -> bool:
    """Whether sentences of this text start in lower case (a deliberately all-lower-case answer):
    its first letter is lower-case and more sentence ends are followed by a lower-case letter
    than by a capital or digit."""
    first = next((c for c in text if c.isalpha()), "")
    return first.islower() and len(_LOWER_START.findall(text)) > len(_UPPER_START.findall(text))


def _is_boundary(
    text: str, m: re.Match[str], next_char: str, seg_start: int, lower_ok: bool
) -> bool:
    if next_char.islower() and not lower_ok:
        return False
    close = m.group("close")
    if next_char == "(" and any(q in close for q in _QUOTES):
        return False
    terminal = text[m.start() : m.end() - len(close)]
    if terminal != ".":
        return True
    k = m.start()
    while k > seg_start and not text[k - 1].isspace():
        k -= 1
    token = text[k : m.start()].lstrip(_LEAD_STRIP)
    if not token:
        return True
    low = token.lower()
    if low in NO_SPLIT_ABBREVIATIONS:
        return False
    if next_char.isdigit() and low in NO_SPLIT_BEFORE_NUMBER:
        return False
    if len(token) == 1 and token.isupper():
        return False  # an initial: "F. Scott Fitzgerald"
    return not _ACRONYM.fullmatch(token)


def _split_block(
    text: str, start: int, end: int, seg: _Protected, lower_ok: bool = False
) -> list[Span]:
    """Split text[start:end] (one prose block) into trimmed sentence spans."""
    out: list[Span] = []
    seg_start = start
    for m in _TERMINAL.finditer(text, start, end):
        if m.start() < seg_start or seg.contains(m.start()):
            continue
        j = m.end()
        while j < end and text[j].isspace():
            j += 1
        if j >= end:
            break
        if _is_boundary(text, m, text[j], seg_start, lower_ok):
            out.append(Span(seg_start, m.end()))
            seg_start = j
    out.append(Span(seg_start, end))
    trimmed: list[Span] = []
    for s, e in out:
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if e > s:
            trimmed.append(Span(s, e))
    return trimmed


class _Protected:
    """Point-membership test over merged protected spans."""

    def __init__(self, spans: tuple[Span, ...]) -> None:
        self.spans = spans
        self.starts = [s for s, _ in spans]

    def contains(self, pos: int) -> bool:
        i = bisect.bisect_right(self.starts, pos) - 1
        return i >= 0 and self.spans[i].end > pos


def _continues(text: str, prev: _Line, line: _Line) -> bool:
    """Hard-wrapped prose: the line continues the previous one."""
    if line.kind != "prose" or prev.kind != "prose" or line.has_marker:
        return False
    if prev.content_end <= prev.content_start or line.content_end <= line.content_start:
        return False
    tail = text[prev.content_start : prev.content_end].rstrip("\"'\u201d\u2019»)]*_")
    if not tail or tail[-1] in _SENTENCE_END_CHARS:
        return False
    return text[line.content_start].islower()


def _analyze(text: str) -> Segmentation:
    lines, code, markers = _scan_lines(text)
    protected = _merge(code + markers + _inline_protected(text, code))
    prot = _Protected(protected)

    # words: the word pattern over each unprotected gap
    words: list[Span] = []
    pos = 0
    for s, e in (*protected, Span(len(text), len(text))):
        if s > pos:
            words.extend(Span(m.start(), m.end()) for m in _WORD.finditer(text, pos, s))
        pos = max(pos, e)
    word_starts = [s for s, _ in words]

    # blocks of prose lines -> sentences
    blocks: list[Span] = []
    prev: _Line | None = None
    for line in lines:
        if line.kind == "prose" and line.content_end > line.content_start:
            if prev is not None and blocks and _continues(text, prev, line):
                blocks[-1] = Span(blocks[-1].start, line.content_end)
            else:
                blocks.append(Span(line.content_start, line.content_end))
        prev = line
    sentences: list[Span] = []
    lower_ok = _lowercase_document(text)
    for bs, be in blocks:
        for s, e in _split_block(text, bs, be, prot, lower_ok):
            # a sentence must hold at least one unprotected word (blocks are built from prose
            # lines only, so a fenced code block is never inside one)
            i = bisect.bisect_left(word_starts, s)
            if i < len(words) and words[i].end <= e:
                sentences.append(Span(s, e))
    return Segmentation(
        text=text,
        protected=protected,
        code=tuple(code),
        markers=tuple(markers),
        words=tuple(words),
        sentences=tuple(sentences),
    )


@lru_cache(maxsize=4096)
def segment(text: str) -> Segmentation:
    """Segment ``text`` (cached: the result is immutable)."""
    return _analyze(text)


# --- convenience functions -------------------------------------------------------------------


def protected_spans(text: str) -> list[Span]:
    return list(segment(text).protected)


def word_spans(text: str) -> list[Span]:
    return list(segment(text).words)


def sentence_spans(text: str) -> list[Span]:
    return list(segment(text).sentences)


def tokenize_words(text: str) -> list[str]:
    return segment(text).word_texts()


def split_sentences(text: str) -> list[str]:
    return segment(text).sentence_texts()


def alnum_positions(text: str) -> list[int]:
    return list(segment(text).alnum_positions)
