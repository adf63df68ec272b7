"""Human pairwise comparisons of original vs perturbed text (methods §2, Hu et al. 2024 app. C).

An annotator says how the *first* text shown relates to the second: A better, B worse,
C as good as, D uncertain. The annotation app records each choice, with the order shown, as
how the *perturbed* text relates to the original (its ``outcome``: "worse" / "same" /
"better" / "uncertain").

Tie and "uncertain" rule (one rule, used by vote_all and vote_vote alike)
--------------------------------------------------------------------------
1. Each annotation becomes a vote: "worse" -> affected; "same" or "better" -> not affected;
   "uncertain" abstains (casts no vote).
2. A group of votes gets the verdict with strictly more votes.
3. A tie, including a group in which everyone abstained, gives no verdict (``None``).
4. vote_vote applies 1-3 to each sample's annotators, then 2-3 to the sample verdicts; a
   sample without a verdict abstains.
5. :func:`match_rate` keeps undecided cells in the denominator and counts them as misses;
   it reports how many there were.

Why this rule: the question asked of a cell is binary (did the perturbation lower this
aspect?), so "same" and "better" answer it the same way and are pooled *before* counting;
counting the three options separately, as a plain plurality over A/B/C would, lets "worse"
win 2-1-1 against a 2-vote "not lowered" majority. A tie broken either way would bias the
match rate towards the more common expectation (most of the 198 cells are expected "not
affected", so "tie -> not affected" inflates it); an undecided cell counted as a miss can only
lower the rate, the conservative direction, and keeps the denominator equal to the number of
cells, so figures stay comparable with the paper's 187/198. Hu et al. say only "plurality",
so their Table 20 may differ from ours on tied or split cells.
"""

import math
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal, TypeVar

from apps.analysis.stats.intervals import Estimate, wilson

Relation = Literal["worse", "same", "better", "uncertain"]
Verdict = Literal["affected", "not_affected"]
VoteMethod = Literal["vote_all", "vote_vote"]

AFFECTED: Final = "affected"
NOT_AFFECTED: Final = "not_affected"

K = TypeVar("K", bound=Hashable)

_ABSTAIN: Final = frozenset({"D", "uncertain"})
_OPTIONS: Final = frozenset({"A", "B", "C", "D", "worse", "same", "better", "uncertain"})


def annotation_consistency(options: Sequence[str]) -> float:
    """Count of the most chosen option other than uncertain, over all annotations of a pair.

    {A, A, C, D} -> 2/4 = 0.5. Pass normalized relations when the display order varied
    between annotators (a raw "A" means opposite things under the two orders). A pair where
    everyone chose uncertain has consistency 0.
    """
    if not options:
        raise ValueError("a pair needs at least one annotation")
    unknown = set(options) - _OPTIONS
    if unknown:
        raise ValueError(f"unknown options {sorted(unknown)}")
    counts = Counter(o for o in options if o not in _ABSTAIN)
    return max(counts.values(), default=0) / len(options)


def verdict_of(relation: Relation) -> Verdict | None:
    """worse -> affected; same or better -> not affected; uncertain -> no verdict."""
    if relation == "worse":
        return AFFECTED
    if relation in ("same", "better"):
        return NOT_AFFECTED
    if relation == "uncertain":
        return None
    raise ValueError(f"unknown relation {relation!r}")


def plurality_verdict(votes: Iterable[Verdict | None]) -> Verdict | None:
    """The verdict with strictly more votes; ``None`` votes abstain; a tie gives ``None``."""
    tally = Counter(v for v in votes if v is not None)
    if tally[AFFECTED] > tally[NOT_AFFECTED]:
        return AFFECTED
    if tally[NOT_AFFECTED] > tally[AFFECTED]:
        return NOT_AFFECTED
    return None


def vote_all(samples: Sequence[Sequence[Relation]]) -> Verdict | None:
    """Cell verdict from all annotations at once (all samples x all annotators)."""
    return plurality_verdict(verdict_of(r) for sample in samples for r in sample)


def vote_vote(samples: Sequence[Sequence[Relation]]) -> Verdict | None:
    """Cell verdict as the plurality of each sample's own plurality."""
    return plurality_verdict(plurality_verdict(verdict_of(r) for r in sample) for sample in samples)


def cell_verdicts(
    cells: Mapping[K, Sequence[Sequence[Relation]]], method: VoteMethod = "vote_all"
) -> dict[K, Verdict | None]:
    """Human verdict per cell (e.g. per (kind, aspect)); a cell holds relations per sample."""
    vote = vote_all if method == "vote_all" else vote_vote
    return {key: vote(samples) for key, samples in cells.items()}


@dataclass(frozen=True)
class MatchRate:
    """Cells whose human verdict equals the expected impact; undecided cells count as misses."""

    matched: int
    total: int
    undecided: int

    @property
    def rate(self) -> float:
        return self.matched / self.total if self.total else math.nan


def match_rate(human: Mapping[K, Verdict | None], expected: Mapping[K, Verdict]) -> MatchRate:
    """Share of the ``expected`` cells whose human verdict matches; a cell absent from
    ``human`` is undecided. Human cells with no expectation are an error."""
    stray = set(human) - set(expected)
    if stray:
        raise ValueError(f"{len(stray)} human cells have no expected impact")
    verdicts = [human.get(key) for key in expected]
    return MatchRate(
        matched=sum(v == e for v, e in zip(verdicts, expected.values(), strict=True)),
        total=len(expected),
        undecided=sum(v is None for v in verdicts),
    )


def share_over_texts(successes: int, n: int, texts: int) -> Estimate:
    """``successes / n`` over every vote (as the pooled verdict counts them), with the
    Wilson 95% interval counting each text once: ``wilson(share x texts, texts)``. Several
    people's votes on one text are not independent evidence about the kind, so the interval
    is as wide as if each text had cast one vote (the conservative choice of
    ``intervals.clustered_share``). N: the votes; clusters: the texts."""
    if n == 0 or texts == 0:
        return Estimate(math.nan, math.nan, math.nan, n, texts)
    value = successes / n
    low, high = wilson(value * texts, texts)
    return Estimate(value, low, high, n, texts)


@dataclass(frozen=True)
class CellVotes:
    """The annotations behind one cell's verdict: votes for each side, abstentions, texts."""

    affected: int
    not_affected: int
    uncertain: int
    texts: int

    @property
    def annotations(self) -> int:
        return self.affected + self.not_affected + self.uncertain

    @property
    def affected_share(self) -> Estimate:
        """The share of votes saying affected ("uncertain" does not vote); above 1/2 the
        vote_all verdict is affected, below it not affected, at 1/2 undecided."""
        return share_over_texts(self.affected, self.affected + self.not_affected, self.texts)


def cell_votes(samples: Sequence[Sequence[Relation]]) -> CellVotes:
    """Count a cell's annotations (relations per sample, i.e. per perturbed text)."""
    verdicts = Counter(verdict_of(r) for sample in samples for r in sample)
    return CellVotes(
        verdicts[AFFECTED], verdicts[NOT_AFFECTED], verdicts[None], sum(1 for s in samples if s)
    )
