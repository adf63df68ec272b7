"""Best-worst scaling (SPEC §10): a person sees a tuple of texts of one source item (its original
and the study's perturbed texts of it) under one criterion, and picks the best and the worst.

Its settings join the study (`study_settings`). Pooled work on the shared base
(models/base.py): each tuple (`BestWorstTuple`, built by the standard design, `bws_tuples`
below) has r `BestWorstSlot` rows, one per answer it needs (docs/annotation.md, "Best-worst
scaling").
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any, Final, Protocol, TypeVar, cast

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import F, Q

from apps.annotation.models.base import Judgement, LeasedSlot, Skip, skip_meta, slot_meta
from apps.annotation.models.study import Study, study_settings
from apps.catalog.models import Criterion
from apps.corpus.models import SourceItem

#: A text of a tuple: a perturbation's id, or None for the item's original.
Text = int | None


class Scaled(Protocol):
    """A study as best-worst scaling reads it: its own settings join `Study` at start-up
    (`study_settings` below), where type checkers do not see them."""

    pk: int
    best_worst_criteria: Any  # a many-to-many manager of `Criterion`
    best_worst_size: int
    best_worst_overlap: int


def scaled(study: Study) -> Scaled:
    """`study` with its best-worst settings typed (`Scaled`)."""
    return cast(Scaled, study)


#: The settings' defaults: texts per tuple (the standard design's), answers per tuple.
DEFAULT_SIZE, DEFAULT_OVERLAP = 4, 2

study_settings(
    {
        "best_worst_criteria": models.ManyToManyField(
            Criterion,
            blank=True,
            related_name="best_worst_in",
            verbose_name="Best-worst scaling criteria",
            help_text="Best-worst scaling: annotators see tuples of an item's texts (its "
            "original and perturbed texts) and pick the best and the worst under each of these "
            "criteria. None: no best-worst scaling.",
        ),
        "best_worst_size": models.PositiveSmallIntegerField(
            default=DEFAULT_SIZE,
            validators=[MinValueValidator(3), MaxValueValidator(6)],
            verbose_name="Texts per tuple",
            help_text="Best-worst scaling: texts shown together (4 is the standard design; an "
            "item with fewer texts shows them all in one tuple).",
        ),
        "best_worst_overlap": models.PositiveSmallIntegerField(
            default=DEFAULT_OVERLAP,
            validators=[MinValueValidator(1)],
            verbose_name="Answers per tuple",
            help_text="Best-worst scaling: annotators who answer each tuple (split-half "
            "reliability needs 2 or more).",
        ),
    },
    progress=("best_worst_overlap",),
    constraints=(
        models.CheckConstraint(
            condition=Q(best_worst_overlap__gte=1, best_worst_size__gte=3),
            name="study_best_worst_positive",
        ),
    ),
)


class BestWorstTuple(models.Model):
    """One tuple of an item's texts x criterion, in a shuffled work order. `texts` lists the
    perturbations shown, in the order shown (null: the item's original). A tuple the study no
    longer asks for (its item's texts changed, or its criterion dropped) is kept `active=False`
    once answered."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="best_worst_tuples")
    item = models.ForeignKey(SourceItem, on_delete=models.CASCADE, related_name="+")
    criterion = models.ForeignKey(Criterion, on_delete=models.PROTECT, related_name="+")
    number = models.PositiveIntegerField(help_text="The tuple's number among its item's.")
    texts = models.JSONField(help_text="Perturbation ids in the order shown; null: the original.")
    position = models.PositiveIntegerField(help_text="Work order (a seeded shuffle).")
    active = models.BooleanField(default=True)

    class Meta:
        ordering = ["study", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["study", "item", "criterion", "number"], name="best_worst_tuple"
            )
        ]

    def __str__(self) -> str:
        return f"{self.study_id}/i{self.item_id}/{self.criterion_id}#{self.number}"

    @property
    def size(self) -> int:
        return len(self.texts)

    def text_keys(self) -> list[tuple[int, Text]]:
        """The texts shown, as (item, perturbation or None): what scores are keyed by."""
        return [(self.item_id, text) for text in self.texts]


class BestWorstSlot(LeasedSlot):
    """One of the r answers a tuple needs: open, leased to an annotator, or done."""

    unit = models.ForeignKey(BestWorstTuple, on_delete=models.CASCADE, related_name="slots")
    unit_field = "unit"
    Meta = slot_meta("best_worst_slot", ("unit",))


class BestWorstSkip(Skip):
    unit = models.ForeignKey(BestWorstTuple, on_delete=models.CASCADE, related_name="+")
    unit_field = "unit"
    Meta = skip_meta("best_worst_skip_once", "unit")


class BestWorst(Judgement):
    """One annotator's best and worst of one tuple: places in the tuple's `texts`, 0 first."""

    unit = models.ForeignKey(BestWorstTuple, on_delete=models.CASCADE, related_name="best_worsts")
    best = models.PositiveSmallIntegerField()
    worst = models.PositiveSmallIntegerField()

    judgement_kind, change_field = "best-worst", "best_worst"
    judgement_label = "Best-worst scaling"
    unit_fields = ("unit",)
    answer_fields = ("best", "worst")
    value_field = "best"

    class Meta:
        ordering = ["study", "created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["unit", "annotator"], name="one_best_worst_per_annotator"
            ),
            models.CheckConstraint(condition=~Q(best=F("worst")), name="best_worst_differ"),
        ]
        indexes = [models.Index(fields=["study", "annotator", "created_at"])]

    def __str__(self) -> str:
        return f"{self.annotator_id} on {self.unit_id}: best {self.best}, worst {self.worst}"

    def shown(self) -> tuple[list[tuple[int, Text]], tuple[int, Text], tuple[int, Text]]:
        """(the texts shown, the best, the worst), as `BestWorstTuple.text_keys`."""
        keys: list[Any] = self.unit.text_keys()
        return keys, keys[self.best], keys[self.worst]


# The standard design: the tuples of an item's texts (`bws_tuples`, `bws_design_size`).
#
# An annotator is shown a tuple of ``size`` texts (4 by default) under one criterion and picks
# the best and the worst. The standard design (Louviere et al. 2015; Kiritchenko & Mohammad
# 2016, 2017) shows N texts in about 2N tuples of 4, so every text appears in 8 tuples:
# ``per_text`` defaults to ``2 * size``, which makes ``N * per_text / size = 2N`` tuples.
#
# What :func:`bws_tuples` guarantees:
#
# * no tuple holds the same text twice;
# * every text appears in exactly ``per_text`` tuples when ``N * per_text`` is divisible by
#   ``size``; otherwise the tuples are ``ceil(N * per_text / size)`` and the slots left over in
#   the last tuple go to ``extra`` distinct texts, which appear ``per_text + 1`` times (so
#   appearances differ by at most one, and never fall below ``per_text``);
# * the same texts in the same order with the same seed give the same tuples.
#
# How (Kiritchenko & Mohammad's generator, with the repairs made exact): ``per_text`` random
# permutations of the texts are laid end to end and cut into consecutive tuples. A tuple can only
# repeat a text where it straddles two permutations; the head of the newer permutation is then
# swapped with later places of the same permutation, so it stays a permutation. Pairs of texts
# should meet about equally often (``lambda = tuples * C(size, 2) / C(N, 2)`` times each); a few
# rounds of local search then swap texts between tuples to bring every pair meeting more than
# ``ceil(lambda)`` times down, accepting a swap only when it lowers the sum of squared pair
# counts. Reached in checks over 2 to 80 texts: no pair above ``ceil(lambda) + 1`` for tuples of
# up to 4 (none above 1 for 2,000 texts and more), up to ``ceil(lambda) + 4`` for tuples of 9
# on few texts, where the local search runs out of its :data:`BUDGET`. Pure: no Django.

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
