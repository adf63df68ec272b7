"""The tuples of a best-worst scaling (BWS) study, as a pure function (issue 38).

An annotator is shown a tuple of ``size`` texts (4 by default) under one criterion and picks
the best and the worst. The standard design (Louviere et al. 2015; Kiritchenko & Mohammad
2016, 2017) shows N texts in about 2N tuples of 4, so every text appears in 8 tuples:
``per_text`` defaults to ``2 * size``, which makes ``N * per_text / size = 2N`` tuples.

What :func:`bws_tuples` guarantees:

* no tuple holds the same text twice;
* every text appears in exactly ``per_text`` tuples when ``N * per_text`` is divisible by
  ``size``; otherwise the tuples are ``ceil(N * per_text / size)`` and the slots left over in
  the last tuple go to ``extra`` distinct texts, which appear ``per_text + 1`` times (so
  appearances differ by at most one, and never fall below ``per_text``);
* the same texts in the same order with the same seed give the same tuples.

How (Kiritchenko & Mohammad's generator, with the repairs made exact): ``per_text`` random
permutations of the texts are laid end to end and cut into consecutive tuples. A tuple can only
repeat a text where it straddles two permutations; the head of the newer permutation is then
swapped with later places of the same permutation, so it stays a permutation. Pairs of texts
should meet about equally often (``lambda = tuples * C(size, 2) / C(N, 2)`` times each); a few
rounds of local search then swap texts between tuples to bring every pair meeting more than
``ceil(lambda)`` times down, accepting a swap only when it lowers the sum of squared pair
counts. Reached in checks over 2 to 80 texts: no pair above ``ceil(lambda) + 1`` for tuples of
up to 4 (none above 1 for 2,000 texts and more), up to ``ceil(lambda) + 4`` for tuples of 9
on few texts, where the local search runs out of its :data:`BUDGET`. No Django imports.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Final, TypeVar

H = TypeVar("H", bound=Hashable)  # a text id

#: Local search: rounds over the pairs that meet too often, swaps tried for each, and swaps
#: tried in all (a bound on the time: near-designs such as 46 texts in tuples of 7 have many
#: pairs that no single swap can improve).
ROUNDS: Final = 20
TRIES: Final = 200
BUDGET: Final = 2_000


@dataclass(frozen=True)
class BwsDesignSize:
    """How many tuples a design of ``texts`` texts has, without building it."""

    texts: int
    size: int
    per_text: int
    tuples: int
    #: Texts shown ``per_text + 1`` times (the rest of the last tuple); 0 when it divides.
    extra: int


def bws_design_size(n_texts: int, *, size: int = 4, per_text: int | None = None) -> BwsDesignSize:
    """Tuples and appearances of the design :func:`bws_tuples` builds for ``n_texts`` texts:
    ``ceil(n_texts * per_text / size)`` tuples, ``per_text`` defaulting to ``2 * size`` (2N
    tuples). Raises ``ValueError`` on the sizes :func:`bws_tuples` refuses."""
    if size < 2:
        raise ValueError(f"a best-worst tuple needs at least 2 texts, not size={size}")
    if n_texts < size:
        raise ValueError(f"{n_texts} texts cannot fill a tuple of {size}: need at least {size}")
    appearances = 2 * size if per_text is None else per_text
    if appearances < 1:
        raise ValueError(f"every text must appear at least once, not per_text={appearances}")
    tuples = -(-n_texts * appearances // size)
    return BwsDesignSize(n_texts, size, appearances, tuples, tuples * size - n_texts * appearances)


def bws_tuples(
    texts: Sequence[H], *, size: int = 4, per_text: int | None = None, seed: int = 0
) -> list[tuple[H, ...]]:
    """The tuples of a BWS design over ``texts`` (distinct ids); see the module docstring."""
    if len(set(texts)) != len(texts):
        raise ValueError("a text is listed twice: the texts of a design must be distinct")
    plan = bws_design_size(len(texts), size=size, per_text=per_text)
    rng = random.Random(seed)
    order = _laid_out(len(texts), plan, rng)
    tuples = [order[i : i + size] for i in range(0, len(order), size)]
    _balance_pairs(tuples, len(texts), rng)
    return [tuple(texts[i] for i in t) for t in tuples]


def _laid_out(n: int, plan: BwsDesignSize, rng: random.Random) -> list[int]:
    """``per_text`` permutations of ``range(n)`` and ``extra`` texts, end to end, such that
    no run of ``size`` starting at a multiple of ``size`` repeats a text."""
    size = plan.size
    order: list[int] = []
    for _ in range(plan.per_text):
        perm = list(range(n))
        rng.shuffle(perm)
        filled = len(order) % size  # places taken in the tuple this permutation completes
        if filled:
            tail, head = set(order[-filled:]), size - filled
            # Places after the head holding a text not in the tail: at least as many as the
            # head's clashes, since n >= size (n - size + clashes of them).
            free = [p for p in range(head, n) if perm[p] not in tail]
            for h in range(head):
                if perm[h] in tail:
                    p = free.pop(rng.randrange(len(free)))
                    perm[h], perm[p] = perm[p], perm[h]
        order.extend(perm)
    if plan.extra:
        tail = set(order[-(size - plan.extra) :])
        order.extend(rng.sample([t for t in range(n) if t not in tail], plan.extra))
    return order


def _balance_pairs(tuples: list[list[int]], n: int, rng: random.Random) -> None:
    """Swap texts between tuples (in place) so that no pair meets more than ``ceil(lambda)``
    times, as far as :data:`ROUNDS` rounds of :data:`TRIES` swaps per pair manage, with
    :data:`BUDGET` swaps tried at most."""
    counts: Counter[int] = Counter()  # pair (a, b), a < b, as a * n + b
    holders: list[set[int]] = [set() for _ in range(n)]
    for number, members in enumerate(tuples):
        for text in members:
            holders[text].add(number)
        counts.update(min(a, b) * n + max(a, b) for a, b in combinations(members, 2))
    size = len(tuples[0])
    target = math.ceil(len(tuples) * size * (size - 1) / (n * (n - 1)))
    budget = BUDGET
    for _ in range(ROUNDS):
        hot = sorted(pair for pair, count in counts.items() if count > target)
        improved = False
        for pair in hot:
            if counts[pair] <= target:
                continue
            if budget <= 0:
                return
            x, y = divmod(pair, n)
            first = rng.choice(sorted(holders[x] & holders[y]))
            moved, tried = _move_apart(tuples, holders, counts, first, (x, y), rng, budget)
            improved, budget = improved or moved, budget - tried
        if not improved:
            return


def _move_apart(
    tuples: list[list[int]],
    holders: list[set[int]],
    counts: Counter[int],
    first: int,
    pair: tuple[int, int],
    rng: random.Random,
    budget: int,
) -> tuple[bool, int]:
    """Try swapping one text of ``pair`` out of tuple ``first`` for a text of another tuple;
    make the first swap that lowers the sum of squared pair counts. -> (swapped, tries)."""
    a_tuple, n = tuples[first], len(holders)
    slots = len(tuples) * len(a_tuple)
    tries = min(TRIES, slots, budget)
    for attempt in range(tries):
        second = rng.randrange(len(tuples))
        b_tuple = tuples[second]
        x, z = pair[attempt % 2], b_tuple[rng.randrange(len(b_tuple))]
        if second == first or z in a_tuple or x in b_tuple:
            continue
        change: Counter[int] = Counter()
        for a in a_tuple:
            if a != x:
                change[min(x, a) * n + max(x, a)] -= 1
                change[min(z, a) * n + max(z, a)] += 1
        for b in b_tuple:
            if b != z:
                change[min(z, b) * n + max(z, b)] -= 1
                change[min(x, b) * n + max(x, b)] += 1
        if sum((counts[p] + d) ** 2 - counts[p] ** 2 for p, d in change.items()) >= 0:
            continue
        for p, d in change.items():
            counts[p] += d
        a_tuple[a_tuple.index(x)], b_tuple[b_tuple.index(z)] = z, x
        holders[x].symmetric_difference_update((first, second))
        holders[z].symmetric_difference_update((first, second))
        return True, attempt + 1
    return False, tries
