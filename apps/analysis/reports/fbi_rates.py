"""The FBI sections of the judge reliability report (methods §3; FBI Tables 2-3): failure rates
per kind and per ability, for single-answer, reference-guided and pairwise judging, each with
its Wilson 95% interval over the perturbed texts (docs/analysis.md).

A perturbed text scored on several criteria, samples or orders is one cluster: ``n`` counts
texts (each counts once in the interval), ``units`` the scores or judgements behind them.
A kind that should lower the score reports a failure; a score-invariant kind (changed, yet
deserving the same score) a success. The ability of a text is its kind's, else its item's
(the FBI release files score-invariant texts under each ability).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field

from apps.analysis.reports.base import Section, Table, rounded
from apps.analysis.reports.judge_data import (
    KindInfo,
    Paired,
    RunScores,
    kind_infos,
    pairwise_pairs,
    text_abilities,
)
from apps.analysis.stats import fbi
from apps.analysis.stats.intervals import Estimate
from apps.judging.models import JudgeRun

RATE_COLUMNS = ["fbi_rate", "ci_low", "ci_high", "n", "units"]
#: The FBI abilities in words (the catalog stores slugs).
ABILITIES = {
    "long-form": "long-form writing",
    "factual": "factual",
    "instruction-following": "instruction following",
    "reasoning": "reasoning",
    "": "no ability given",
}
#: The measure of each kind of rate, as the tables name it: "failure: ..." for kinds that
#: should lower the score, "success: ..." for score-invariant kinds.
NOT_LOWER = "failure: not scored lower"
SCORE_KEPT = "success: score kept"
STILL_MAX = "failure: still the maximum score"
MAX_KEPT = "success: the maximum score kept"
NOT_ORIGINAL = "failure: not the original (one order)"
NOT_BOTH = "failure: original not chosen in both orders"
TIE = "success: tie (one order)"
TIE_OR_EITHER = "success: tie or either (both orders)"


def ability_name(slug: str) -> str:
    return ABILITIES.get(slug, slug.replace("-", " ").replace("_", " "))


@dataclass(frozen=True)
class KindRate:
    """One rate of one kind (or of one ability's kinds): what it measures and its estimate
    (``n``: units, ``clusters``: perturbed texts)."""

    name: str
    ability: str
    measure: str
    estimate: Estimate

    @property
    def failure(self) -> float:
        """The share that went wrong: the rate, or one minus it for a success."""
        value = self.estimate.value
        return 1 - value if self.measure.startswith("success") else value

    def row(self) -> list[object]:
        e = self.estimate
        return [
            self.name,
            self.ability,
            self.measure,
            rounded(e.value),
            rounded(e.ci_low),
            rounded(e.ci_high),
            e.effective_n,
            e.n,
        ]


@dataclass
class _Scores:
    """A kind's perturbed texts scored by a run: each (text, criterion) unit's original and
    perturbed score (the original NaN when the run did not score it), text and ability."""

    orig: list[float] = field(default_factory=list)
    pert: list[float] = field(default_factory=list)
    texts: list[Hashable] = field(default_factory=list)
    abilities: list[str] = field(default_factory=list)

    def extend(self, other: _Scores) -> None:
        self.orig += other.orig
        self.pert += other.pert
        self.texts += other.texts
        self.abilities += other.abilities


def _scores_by_kind(data: RunScores) -> dict[int, _Scores]:
    out: dict[int, _Scores] = defaultdict(_Scores)
    for (item, perturbation, dim), (kind, score) in sorted(data.perturbed.items()):
        scores = out[kind]
        scores.orig.append(data.original.get((item, dim), math.nan))
        scores.pert.append(score)
        scores.texts.append(perturbation)
        scores.abilities.append(data.kinds[kind].ability or data.item_ability.get(item, ""))
    return out


Measure = Callable[[_Scores], Estimate]


def _single_measure(run: JudgeRun, invariant: bool) -> tuple[str, Measure]:
    """What a kind's rate is under the run's strategy, and how it is computed."""
    strategy = run.strategy
    if strategy is not None and strategy.family == "reference":
        top = float(strategy.scale_max)
        return (
            MAX_KEPT if invariant else STILL_MAX
        ), lambda s: fbi.reference_guided_failure_estimate(s.pert, top, s.texts)
    if invariant:
        return SCORE_KEPT, lambda s: fbi.score_invariant_success_estimate(s.orig, s.pert, s.texts)
    return NOT_LOWER, lambda s: fbi.single_answer_failure_estimate(s.orig, s.pert, s.texts)


def _abilities(values: Iterable[str]) -> str:
    return ", ".join(ability_name(a) for a in sorted(set(values)))


def kind_rates(run: JudgeRun, data: RunScores) -> list[KindRate]:
    """Per kind: its failure rate (or, score-invariant, its success rate) over its perturbed
    texts. Reference-guided rates need only the perturbed scores; the others skip a kind
    none of whose originals was scored."""
    rates = []
    by_kind = _scores_by_kind(data)
    for kind_id, kind in sorted(data.kinds.items(), key=lambda kv: kv[1].name):
        scores = by_kind.get(kind_id)
        if scores is None:
            continue
        measure, compute = _single_measure(run, kind.score_invariant)
        estimate = compute(scores)
        if estimate.n:
            rates.append(KindRate(kind.name, _abilities(scores.abilities), measure, estimate))
    return rates


def ability_rates(run: JudgeRun, data: RunScores) -> list[tuple[KindRate, int]]:
    """Per ability: the kinds that should lower the score pooled (a failure rate), and the
    score-invariant kinds pooled (a success rate), each with how many kinds entered."""
    pooled: dict[tuple[str, bool], _Scores] = defaultdict(_Scores)
    kinds: dict[tuple[str, bool], set[int]] = defaultdict(set)
    for kind_id, scores in _scores_by_kind(data).items():
        invariant = data.kinds[kind_id].score_invariant
        for ability in set(scores.abilities):
            keep = [i for i, a in enumerate(scores.abilities) if a == ability]
            pooled[(ability, invariant)].extend(_subset(scores, keep))
            kinds[(ability, invariant)].add(kind_id)
    out = []
    for (ability, invariant), scores in sorted(pooled.items()):
        measure, compute = _single_measure(run, invariant)
        estimate = compute(scores)
        if estimate.n:
            rate = KindRate(ability_name(ability), ability_name(ability), measure, estimate)
            out.append((rate, len(kinds[(ability, invariant)])))
    return out


def _subset(scores: _Scores, keep: Sequence[int]) -> _Scores:
    return _Scores(
        [scores.orig[i] for i in keep],
        [scores.pert[i] for i in keep],
        [scores.texts[i] for i in keep],
        [scores.abilities[i] for i in keep],
    )


UNITS_CAPTION = (
    "n: perturbed texts, each counting once in the Wilson 95% interval however many "
    "criteria it was scored on; units: its (text, criterion) scores."
)


def failure_section(run: JudgeRun, data: RunScores, paired: Paired | None = None) -> Section:
    """The per-kind and per-ability rates of a single-answer or reference-guided run.
    ``paired`` is not read (the rates need each unit's text, which ``data`` holds); it is
    accepted for callers written before."""
    return Section(
        "Failure rates (FBI)",
        "Single-answer scoring: the share of perturbed texts not scored lower than their "
        "original (a failure to detect); reference-guided: the share still given the maximum "
        "score beside the original as reference (it needs no score of the original). For "
        "score-invariant kinds (changed, yet deserving the same score), the share handled "
        "right: the score kept, or the maximum kept beside the reference. A text's share is "
        "over its criteria; the rate is the mean over texts.",
        tables=[
            Table(
                "failure_rates",
                ["kind", "ability", "measure", *RATE_COLUMNS],
                [r.row() for r in kind_rates(run, data)],
                "Per kind. " + UNITS_CAPTION,
            ),
            Table(
                "failure_by_ability",
                ["ability", "measure", *RATE_COLUMNS, "kinds"],
                [[*r.row()[1:], kinds] for r, kinds in ability_rates(run, data)],
                "Per ability (FBI Table 3): the failure rows pool the kinds that should "
                "lower the score, the success rows the score-invariant kinds, never the two "
                "together. " + UNITS_CAPTION + " kinds: how many kinds entered.",
            ),
        ],
    )


Pairs = list[tuple[fbi.Judgements, Hashable, str]]  # judgements, perturbed text, ability


def _pairwise_measures(
    invariant: bool,
) -> tuple[tuple[str, str], Callable[..., tuple[Estimate, Estimate]]]:
    if invariant:
        return (TIE, TIE_OR_EITHER), fbi.pairwise_invariant_estimates
    return (NOT_ORIGINAL, NOT_BOTH), fbi.pairwise_failure_estimates


def _pairwise_rates(name: str, invariant: bool, pairs: Pairs) -> list[KindRate]:
    measures, compute = _pairwise_measures(invariant)
    judgements = [j for j, _, _ in pairs]
    estimates = compute(judgements, [text for _, text, _ in pairs])
    ability = _abilities(a for _, _, a in pairs)
    return [
        KindRate(name, ability, measure, estimate)
        for measure, estimate in zip(measures, estimates, strict=True)
        if estimate.n
    ]


def pairwise_kind_rates(run: JudgeRun) -> list[KindRate]:
    """Per kind, two rates over its pairs (each shown in both orders): per judgement and per
    pair; failures for kinds that should lower the score, successes for score-invariant
    kinds (a tie, or no consistent preference)."""
    by_kind, kinds = _pairs_by_kind(run)
    rates = []
    for kind_id, pairs in sorted(by_kind.items(), key=lambda kv: kinds[kv[0]].name):
        kind = kinds[kind_id]
        rates += _pairwise_rates(kind.name, kind.score_invariant, pairs)
    return rates


def _pairs_by_kind(run: JudgeRun) -> tuple[dict[int, Pairs], dict[int, KindInfo]]:
    found = pairwise_pairs(run)
    kinds = kind_infos({kind for kind, _ in found})
    abilities = text_abilities({key[0] for _, key in found})
    by_kind: dict[int, Pairs] = defaultdict(list)
    for (kind, key), judgements in sorted(found.items(), key=lambda kv: str(kv[0])):
        ability = kinds[kind].ability or abilities.get(key[0], "")
        by_kind[kind].append((judgements, key[0], ability))
    return by_kind, kinds


def pairwise_ability_rates(run: JudgeRun) -> list[tuple[KindRate, int]]:
    by_kind, kinds = _pairs_by_kind(run)
    pooled: dict[tuple[str, bool], Pairs] = defaultdict(list)
    counted: dict[tuple[str, bool], set[int]] = defaultdict(set)
    for kind_id, pairs in by_kind.items():
        for pair in pairs:
            group = (pair[2], kinds[kind_id].score_invariant)
            pooled[group].append(pair)
            counted[group].add(kind_id)
    return [
        (rate, len(counted[group]))
        for group, pairs in sorted(pooled.items())
        for rate in _pairwise_rates(ability_name(group[0]), group[1], pairs)
    ]


PAIRWISE_CAPTION = (
    "n: perturbed texts, each counting once in the Wilson 95% interval; units: single "
    "judgements for the one-order rates, pairs judged in both orders for the both-orders "
    "rates (a text judged on several criteria or samples gives several)."
)


def pairwise_section(run: JudgeRun) -> Section:
    return Section(
        "Pairwise (both orders)",
        "Each (original, perturbed) pair is judged twice, the order swapped. For kinds that "
        "should lower the score, two failure rates: the share of single judgements not "
        "choosing the original (a tie counts as a miss), and the share of pairs where the "
        "original was not chosen in both orders. For score-invariant kinds, where both texts "
        "deserve the same verdict, two success rates: the share of judgements answering "
        "tie, and the share of pairs tied or either, with no consistent preference (a tie in "
        "either order, or each text chosen once). A text's share is over its judgements or "
        "pairs; the rate is the mean over texts.",
        tables=[
            Table(
                "pairwise",
                ["kind", "ability", "measure", *RATE_COLUMNS],
                [r.row() for r in pairwise_kind_rates(run)],
                "Per kind. " + PAIRWISE_CAPTION,
            ),
            Table(
                "pairwise_by_ability",
                ["ability", "measure", *RATE_COLUMNS, "kinds"],
                [[*r.row()[1:], kinds] for r, kinds in pairwise_ability_rates(run)],
                "Per ability (FBI Table 3): failure rows pool the kinds that should lower "
                "the score, success rows the score-invariant kinds. "
                + PAIRWISE_CAPTION
                + " kinds: how many kinds entered.",
            ),
        ],
    )
