"""The criteria design of a pairwise-comparison study (methods §2), as a pure function.

Annotators are split into G groups. Inside each group the study's criteria are partitioned
among the group's annotators so that

* every criterion goes to exactly one annotator of the group (so every group covers every
  pair x criterion once, and each pair x criterion gets G annotations);
* no annotator gets two descriptions of the same aspect;
* loads differ by at most one criterion between the annotators of a group;
* description types are spread as evenly as the first two rules allow.

How: aspects are taken largest first; the m descriptions of an aspect go to m distinct
annotators, chosen by a small assignment problem whose cost is, in this order, the annotator's
current load (so loads never drift apart by more than one) and how many descriptions of that
type the annotator already has (so types spread out). No Django imports.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

A = TypeVar("A", bound=Hashable)  # an annotator id
C = TypeVar("C", bound=Hashable)  # a criterion id


class PlanError(ValueError):
    """The design cannot be met with these annotators, groups and criteria."""


@dataclass(frozen=True)
class CriterionSpec(Generic[C]):
    id: C
    aspect: Hashable
    description_type: str


@dataclass
class Share(Generic[A, C]):
    """What one annotator does: their group and their criteria."""

    annotator: A
    group: int
    criteria: list[C] = field(default_factory=list)


def groups_split(
    annotators: Sequence[A], groups: int, placed: Mapping[A, int] | None = None
) -> list[list[A]]:
    """The annotators in `groups` groups: those `placed` in theirs (a recruited panel's places
    in a group), the others dealt in order, each to the smallest group then (round-robin when
    none is placed: sizes differ by at most one)."""
    placed = placed or {}
    if groups < 1:
        raise PlanError("a study needs at least one group")
    if len(annotators) < groups:
        raise PlanError(f"{groups} groups need at least {groups} annotators, not {len(annotators)}")
    split: list[list[A]] = [[] for _ in range(groups)]
    for annotator in annotators:
        if annotator in placed:
            if not 0 <= placed[annotator] < groups:
                raise PlanError(f"a place in group {placed[annotator] + 1} of {groups}")
            split[placed[annotator]].append(annotator)
    for annotator in annotators:
        if annotator not in placed:
            min(split, key=len).append(annotator)
    return split


def criteria_plan(
    *,
    annotators: Sequence[A],
    groups: int,
    criteria: Sequence[CriterionSpec[C]],
    placed: Mapping[A, int] | None = None,
) -> list[Share[A, C]]:
    """One `Share` per annotator (in the order given); see the module docstring. `placed`:
    annotators whose group is fixed (see `groups_split`)."""
    if len(set(annotators)) != len(annotators):
        raise PlanError("an annotator is listed twice")
    shares: list[Share[A, C]] = []
    for number, members in enumerate(groups_split(annotators, groups, placed)):
        shares.extend(_group_plan(members, number, criteria))
    order = {a: i for i, a in enumerate(annotators)}
    return sorted(shares, key=lambda s: order[s.annotator])


def _group_plan(
    members: list[A], group: int, criteria: Sequence[CriterionSpec[C]]
) -> list[Share[A, C]]:
    # Imported here: scipy takes a second to import, and only plan building needs it.
    import numpy as np
    from scipy.optimize import linear_sum_assignment

    by_aspect: dict[Hashable, list[CriterionSpec[C]]] = defaultdict(list)
    for spec in criteria:
        by_aspect[spec.aspect].append(spec)
    crowded = {
        aspect: len(specs) for aspect, specs in by_aspect.items() if len(specs) > len(members)
    }
    if crowded:
        aspect, most = max(crowded.items(), key=lambda kv: kv[1])
        raise PlanError(
            f"aspect {aspect!r} has {most} descriptions but group {group + 1} has only "
            f"{len(members)} annotators; each annotator may see one description per aspect"
        )
    shares = [Share[A, C](annotator=a, group=group) for a in members]
    types: list[Counter[str]] = [Counter() for _ in members]
    # Largest aspects first; ties in a stable order so the plan is reproducible.
    aspects = sorted(by_aspect, key=lambda a: (-len(by_aspect[a]), str(a)))
    big = (len(criteria) + 1) ** 2  # one unit of load outweighs any type imbalance
    for aspect in aspects:
        specs = by_aspect[aspect]
        cost = np.array(
            [
                [
                    big * len(share.criteria) + types[k][spec.description_type]
                    for k, share in enumerate(shares)
                ]
                for spec in specs
            ]
        )
        rows, cols = linear_sum_assignment(cost)
        for r, k in zip(rows, cols, strict=True):
            shares[k].criteria.append(specs[r].id)
            types[k][specs[r].description_type] += 1
    _spread_types(shares, types, {spec.id: spec for spec in criteria})
    return shares


def _spread_types(
    shares: list[Share[A, C]], types: list[Counter[str]], specs: dict[C, CriterionSpec[C]]
) -> None:
    """Local search: exchange two descriptions of one aspect between two annotators (or move
    one to an annotator without that aspect and one criterion less) while that lowers the sum
    of squared type counts. Loads stay within one and aspects stay unique per annotator."""

    def gain(k: int, drop: str, add: str) -> int:  # change of sum of squares for annotator k
        if drop == add:
            return 0
        return 2 * (types[k][add] - types[k][drop]) + 2

    improved = True
    while improved:
        improved = False
        for i, j in ((i, j) for i in range(len(shares)) for j in range(len(shares)) if i != j):
            held_j = {specs[c].aspect: c for c in shares[j].criteria}
            for c in list(shares[i].criteria):
                spec = specs[c]
                other = held_j.get(spec.aspect)
                if other is None:
                    if len(shares[i].criteria) != len(shares[j].criteria) + 1:
                        continue
                    delta = (
                        1
                        - 2 * types[i][spec.description_type]
                        + 1
                        + 2 * types[j][spec.description_type]
                    )
                    if delta < 0:
                        _move(shares, types, specs, c, i, j)
                        improved = True
                        break
                    continue
                t_i, t_j = spec.description_type, specs[other].description_type
                if t_i == t_j:
                    continue
                if gain(i, t_i, t_j) + gain(j, t_j, t_i) < 0:
                    _move(shares, types, specs, c, i, j)
                    _move(shares, types, specs, other, j, i)
                    improved = True
                    break
            if improved:
                break


def _move(
    shares: list[Share[A, C]],
    types: list[Counter[str]],
    specs: dict[C, CriterionSpec[C]],
    criterion: C,
    source: int,
    target: int,
) -> None:
    shares[source].criteria.remove(criterion)
    shares[target].criteria.append(criterion)
    types[source][specs[criterion].description_type] -= 1
    types[target][specs[criterion].description_type] += 1


def design_size(*, groups: int, pairs: int, criteria: int) -> int:
    """Annotations the design asks for: every group covers every pair x criterion once."""
    return groups * pairs * criteria
