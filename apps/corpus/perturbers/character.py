"""Character-level rule-based kinds: random deletions, random typos, spelling mistakes.

All three only touch unprotected text (see :mod:`.segmentation`): code, URLs and markdown
markers are never altered.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import typo
import typo.Errer
import typo.keyboardlayouts.en_default

from .base import (
    Edit,
    PerturbationNotApplicable,
    PerturbResult,
    apply_edits,
    make_rng,
    require_count,
)
from .segmentation import segment

__all__ = [
    "SPELLING_OPERATIONS",
    "TYPO_OPERATIONS",
    "char_deletion",
    "spelling_mistake",
    "spelling_targets",
    "typo_targets",
    "typos",
]


# --- random character deletion (DHP, C level) ------------------------------------------------


def char_deletion(text: str, *, seed: int, k: int) -> PerturbResult:
    """Delete exactly ``k`` alphanumeric characters chosen uniformly among the unprotected ones.

    Nothing else changes: no whitespace or punctuation is removed.
    """
    rule = "char_deletion"
    require_count(rule, "k", k)
    rng = make_rng(seed)
    candidates = segment(text).alnum_positions
    if len(candidates) < k:
        raise PerturbationNotApplicable(
            rule, f"needs {k} alphanumeric characters, the text has {len(candidates)}"
        )
    chosen = sorted(rng.sample(candidates, k))
    edits = tuple(Edit(i, i + 1, text[i], "") for i in chosen)
    return PerturbResult(
        apply_edits(text, edits), {"rule": rule, "seed": seed, "k": k, "positions": chosen}, edits
    )


# --- random typos with the `typo` package (DHP, C level) -------------------------------------

#: StrErrer methods used, one per typo; all act inside one word. The space-based ones
#: (skipped_space, random_space) are left out: they merge or split words.
TYPO_OPERATIONS: tuple[str, ...] = (
    "char_swap",
    "missing_char",
    "extra_char",
    "nearby_char",
    "similar_char",
    "repeated_char",
    "unichar",
)

_TYPO_LOCK = threading.Lock()


class _DrivenRandom:
    """Stands in for the ``random`` module inside `typo`: draws from ``rng``, ignores reseeds."""

    def __init__(self, rng: random.Random) -> None:
        self.randint = rng.randint
        self.choice = rng.choice

    def seed(self, *args: object, **kwargs: object) -> None:
        return None


@contextmanager
def _typo_random(rng: random.Random) -> Iterator[None]:
    """Make the `typo` package draw from ``rng`` instead of the global ``random`` module.

    typo 0.1.7 calls ``random.seed/randint/choice`` on the module-level ``random`` and
    ``StrErrer(value, seed=None)`` reseeds it from the OS. We swap the ``random`` reference of its
    two modules for a stand-in that draws from ``rng`` and ignores reseeding, under a lock, and
    put it back afterwards: output depends on ``seed`` only, and the process-wide random state is
    left alone. (Another thread calling `typo` directly meanwhile would draw from ``rng``.)
    """
    with _TYPO_LOCK:
        saved = (typo.Errer.random, typo.keyboardlayouts.en_default.random)
        driven = _DrivenRandom(rng)
        typo.Errer.random = driven
        typo.keyboardlayouts.en_default.random = driven
        try:
            yield
        finally:
            typo.Errer.random, typo.keyboardlayouts.en_default.random = saved


def typo_targets(text: str) -> list[int]:
    """Indices (into ``segment(text).words``) of the words typos may hit: ASCII words.

    (typo's keyboard tables are ASCII; it crashes on some non-ASCII digits.)
    """
    return list(segment(text).ascii_word_indices)


def _one_typo(word: str, rng: random.Random) -> tuple[str, str]:
    """One typo in ``word``; call inside ``_typo_random(rng)``.

    The operation is drawn uniformly; when it leaves the word unchanged (``char_swap`` on
    ``"ll"``, ``unichar`` without a doubled letter...) the next ones in the list are tried.
    """
    n = len(TYPO_OPERATIONS)
    first = rng.randrange(n)
    for j in range(n):
        op = TYPO_OPERATIONS[(first + j) % n]
        errer = typo.StrErrer(word)
        new = str(getattr(errer, op)().result)
        if new != word and new:
            return new, op
    raise AssertionError(f"no typo operation changed {word!r}")  # nearby_char always does


def typos(text: str, *, seed: int, k: int) -> PerturbResult:
    """Add ``k`` typos with the `typo` package, one typo in each of ``k`` distinct words.

    Each typo is one StrErrer operation (swap, missing, extra, nearby, visually similar,
    repeated or un-doubled character) applied to one word alone, so nothing outside the chosen
    words changes and each chosen word ends at edit distance 1 from the original.
    """
    rule = "typos"
    require_count(rule, "k", k)
    rng = make_rng(seed)
    seg = segment(text)
    targets = typo_targets(text)
    if len(targets) < k:
        raise PerturbationNotApplicable(
            rule, f"needs {k} words for {k} typos, the text has {len(targets)}"
        )
    chosen = sorted(rng.sample(targets, k))
    edits: list[Edit] = []
    operations: list[str] = []
    with _typo_random(rng):
        for i in chosen:
            s, e = seg.words[i]
            new, op = _one_typo(text[s:e], rng)
            edits.append(Edit(s, e, text[s:e], new))
            operations.append(op)
    params = {"rule": rule, "seed": seed, "k": k, "words": chosen, "operations": operations}
    return PerturbResult(apply_edits(text, edits), params, tuple(edits))


# --- spelling mistakes (Hu et al., Grammaticality) -------------------------------------------

_VOWELS = "aeiou"


def _double(word: str, rng: random.Random) -> str | None:
    i = rng.randrange(len(word))
    return word[: i + 1] + word[i] + word[i + 1 :]


def _drop(word: str, rng: random.Random) -> str | None:
    i = rng.randrange(1, len(word))  # keep the first letter
    return word[:i] + word[i + 1 :]


def _transpose(word: str, rng: random.Random) -> str | None:
    spots = [i for i in range(1, len(word) - 1) if word[i].lower() != word[i + 1].lower()]
    if not spots:
        return None
    i = rng.choice(spots)
    return word[:i] + word[i + 1] + word[i] + word[i + 2 :]


def _vowel(word: str, rng: random.Random) -> str | None:
    spots = [i for i in range(1, len(word)) if word[i].lower() in _VOWELS]
    if not spots:
        return None
    i = rng.choice(spots)
    new = rng.choice([v for v in _VOWELS if v != word[i].lower()])
    if word[i].isupper():
        new = new.upper()
    return word[:i] + new + word[i + 1 :]


#: misspelling operations (name -> function); each returns None when it cannot apply
SPELLING_OPERATIONS: dict[str, Callable[[str, random.Random], str | None]] = {
    "double": _double,  # wants -> wantts
    "drop": _drop,  # know -> kno
    "transpose": _transpose,  # after -> atfer
    "vowel": _vowel,  # separate -> seperate
}


def spelling_targets(text: str) -> list[int]:
    """Indices of words that can be misspelled: alphabetic words of 3+ letters."""
    return list(segment(text).alpha_word_indices)


def spelling_mistake(text: str, *, seed: int, k: int) -> PerturbResult:
    """Misspell ``k`` distinct words (alphabetic, 3+ letters), one mistake each.

    A mistake doubles a letter, drops a letter (never the first), swaps two adjacent inner
    letters or replaces a vowel by another: the word stays alphabetic and ends at edit distance
    1 from the original, like the examples of Hu et al. (``wantts``, ``kno``, ``atfer``).
    """
    rule = "spelling_mistake"
    require_count(rule, "k", k)
    rng = make_rng(seed)
    seg = segment(text)
    targets = spelling_targets(text)
    if len(targets) < k:
        raise PerturbationNotApplicable(
            rule, f"needs {k} words of 3+ letters, the text has {len(targets)}"
        )
    chosen = sorted(rng.sample(targets, k))
    edits: list[Edit] = []
    operations: list[str] = []
    for i in chosen:
        s, e = seg.words[i]
        word = text[s:e]
        names = list(SPELLING_OPERATIONS)
        rng.shuffle(names)
        for name in names:
            new = SPELLING_OPERATIONS[name](word, rng)
            if new is not None and new != word:
                edits.append(Edit(s, e, word, new))
                operations.append(name)
                break
        else:  # pragma: no cover - "double" and "drop" always apply
            raise AssertionError(f"no spelling operation changed {word!r}")
    params = {"rule": rule, "seed": seed, "k": k, "words": chosen, "operations": operations}
    return PerturbResult(apply_edits(text, edits), params, tuple(edits))
