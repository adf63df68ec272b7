"""Each card figure as values per unit (docs/cards.md): one flag or number per perturbation,
pair, text, kind or call, keyed so the same unit in another judge's audit has the same key.

The card summarises a figure's units (a share with its Wilson interval, a mean with its
bootstrap interval); judges side by side pair their units by key for the paired tests. The
per-unit formulas are the statistics modules' own (``stats.fbi``, ``stats.prompting``,
``reports.discernment``...); nothing is re-derived here.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Literal

from django.db.models import Q

from apps.analysis.cards.evidence import SubjectEvidence
from apps.analysis.reports import discernment
from apps.analysis.reports.adversarial import search_finals
from apps.analysis.reports.judge_data import RunScores, item_deltas, pairwise_pairs
from apps.analysis.reports.judge_reliability import cell_classes
from apps.analysis.reports.judge_vs_human import judge_means, rating_sources
from apps.analysis.stats import fbi
from apps.analysis.stats.prompting import cue_matches
from apps.judging.models import JudgeCall, JudgeRun, Technique
from apps.judging.models.audit import PartKind

Units = dict[Hashable, float]


@dataclass(frozen=True)
class Measure:
    """A card figure measured per unit. ``worse``: which direction is worse for a judge;
    ``test``: the paired test that compares two judges on it."""

    key: str
    label: str
    part: str
    summary: Literal["share", "mean"]
    worse: Literal["higher", "lower"]
    test: Literal["mcnemar", "bootstrap", "wilcoxon"]
    unit: str
    units: Callable[[SubjectEvidence], Units]
    #: Why a part that ran can still give no unit of this figure.
    empty: str = "no data: nothing of this kind was scored"


def _single_pairs(data: RunScores, invariant: bool) -> tuple[list, list[float], list[float]]:
    keys, orig, pert = [], [], []
    for (item, perturbation, dim), (kind, score) in data.perturbed.items():
        if (item, dim) in data.original and data.kinds[kind].score_invariant == invariant:
            keys.append((perturbation, dim))
            orig.append(data.original[(item, dim)])
            pert.append(score)
    return keys, orig, pert


def detection_failures(evidence: SubjectEvidence) -> Units:
    """Per (perturbation, criterion): 1 when the judge scored it not lower than its original."""
    data = evidence.scores(PartKind.FBI_SINGLE)
    if data is None:
        return {}
    keys, orig, pert = _single_pairs(data, invariant=False)
    return dict(zip(keys, map(float, fbi.single_answer_failures(orig, pert)), strict=True))


def invariant_successes(evidence: SubjectEvidence) -> Units:
    """Per (perturbation, criterion) of a score-invariant kind: 1 when the score was kept."""
    data = evidence.scores(PartKind.FBI_SINGLE)
    if data is None:
        return {}
    keys, orig, pert = _single_pairs(data, invariant=True)
    return dict(zip(keys, map(float, fbi.score_invariant_successes(orig, pert)), strict=True))


def reference_failures(evidence: SubjectEvidence) -> Units:
    """Per (perturbation, criterion): 1 when it still got the maximum score beside the
    original as reference."""
    data = evidence.scores(PartKind.FBI_REFERENCE)
    run = evidence.run(PartKind.FBI_REFERENCE)
    if data is None or run is None or run.strategy is None:
        return {}
    keys, scores = [], []
    for (_, perturbation, dim), (kind, score) in data.perturbed.items():
        if not data.kinds[kind].score_invariant:
            keys.append((perturbation, dim))
            scores.append(score)
    flags = fbi.reference_guided_failures(scores, run.strategy.scale_max)
    return dict(zip(keys, map(float, flags), strict=True))


def _pairs(evidence: SubjectEvidence) -> dict:
    run = evidence.run(PartKind.FBI_PAIRWISE)
    return pairwise_pairs(run) if run is not None else {}


def pairwise_failures(evidence: SubjectEvidence) -> Units:
    """Per pair shown in both orders: 1 unless the original won in both."""
    return {
        key: float(not detected[0])
        for (_, key), judgements in _pairs(evidence).items()
        if (detected := fbi.detected_in_both([judgements]))
    }


def order_flips(evidence: SubjectEvidence) -> Units:
    """Per pair shown in both orders: 1 when the preferred text changed with the order."""
    return {
        key: float(flips[0])
        for (_, key), judgements in _pairs(evidence).items()
        if (flips := fbi.order_flips([judgements]))
    }


def _deltas(evidence: SubjectEvidence, which: str) -> Units:
    data = evidence.scores(PartKind.ASPECT_DELTAS)
    if data is None:
        return {}
    by_item = item_deltas(data)
    classes = cell_classes(data, list(by_item))
    out: Units = {}
    for cell, items in by_item.items():
        if classes.get(cell) == which:
            for item, delta in items.items():
                out[(cell, item)] = abs(delta) if which == "S_F" else delta
    return out


def s_t_deltas(evidence: SubjectEvidence) -> Units:
    """Per (S_T cell, item): original minus perturbed score (should be clearly positive)."""
    return _deltas(evidence, "S_T")


def s_f_deltas(evidence: SubjectEvidence) -> Units:
    """Per (S_F cell, item): |original minus perturbed| (should be near 0)."""
    return _deltas(evidence, "S_F")


def kind_discernment(evidence: SubjectEvidence) -> Units:
    """Per kind that should lower the score: its discernment D (default combination)."""
    data = evidence.scores(PartKind.DISCERNMENT)
    if data is None or not data.perturbed:
        return {}
    results = discernment.kind_results(data, data.by_kind_dim())
    return {
        r.kind.slug: r.d(published=False)
        for r in results
        if not r.kind.score_invariant and not math.isnan(r.d(published=False))
    }


def cue_baseline(evidence: SubjectEvidence) -> JudgeRun | None:
    """The run the misleading cue is compared with: the part's baseline (the audit's
    knowledge-prompt run of the same judge), else a knowledge-prompt run of the subject's,
    else its single-answer run (the same judge and strategy without the cue)."""
    part = evidence.parts.get(PartKind.MISLEADING_CUE)
    if part is not None and part.baseline is not None:
        return part.baseline
    for run in evidence.runs:
        knowledge = run.strategy is not None and run.strategy.technique == Technique.KNOWLEDGE
        if knowledge and run != evidence.run(PartKind.MISLEADING_CUE):
            return run
    return evidence.run(PartKind.FBI_SINGLE)


def cue_resisted(evidence: SubjectEvidence) -> Units:
    """Per (text, criterion): 1 when the score under the misleading cue equals the score
    without it (the judge resisted the cue)."""
    cue, baseline = evidence.run(PartKind.MISLEADING_CUE), cue_baseline(evidence)
    if cue is None or baseline is None:
        return {}
    with_cue, without = judge_means(cue), judge_means(baseline)
    keys = sorted(set(with_cue) & set(without), key=str)
    flags = cue_matches([with_cue[k] for k in keys], [without[k] for k in keys])
    return dict(zip(keys, map(float, flags), strict=True))


def human_errors(evidence: SubjectEvidence) -> Units:
    """Per (text, criterion) rated by humans: |judge score - mean human score| as a share of
    the judge's scale (0 = the humans' mean, 1 = the whole scale away)."""
    run = evidence.run(PartKind.HUMAN_AGREEMENT)
    if run is None or run.study is None:
        return {}
    means = judge_means(run)
    span = (run.strategy.scale_max - run.strategy.scale_min) if run.strategy else 1.0
    out: Units = {}
    for _, ratings in rating_sources(run.study):
        for criterion, texts in ratings.items():
            for unit, by_rater in texts.items():
                if (unit, criterion) in means and by_rater:
                    human = sum(by_rater.values()) / len(by_rater)
                    out[(unit, criterion)] = abs(means[(unit, criterion)] - human) / (span or 1.0)
    return out


def _attacks(evidence: SubjectEvidence, direction: str) -> Units:
    search = evidence.search()
    if search is None or search.direction != direction:
        return {}
    rows = search_finals(Q(search_id=search.pk))
    return {row.external_id: float(row.success) for row in rows if row.method == "adveval"}


def unparsed(evidence: SubjectEvidence) -> Units:
    """Per answered call of every part (its identity in its part): 1 when unparsed."""
    part_of = {p.baseline_id: f"{k} baseline" for k, p in evidence.parts.items() if p.baseline_id}
    part_of |= {p.run_id: kind for kind, p in evidence.parts.items() if p.run_id}
    rows = JudgeCall.objects.filter(
        run_id__in=list(part_of), parse_status__in=("parsed", "unparsed")
    ).values_list("run_id", "identity", "parse_status")
    return {(part_of[run], identity): float(status == "unparsed") for run, identity, status in rows}


NO_CELLS = (
    "no data: a cell counts as S_T or S_F once the study's human comparisons agree with "
    "the kind's expected impact on the aspect (none do yet)"
)
MEASURES = [
    Measure(
        "discernment",
        "Discernment D per kind",
        PartKind.DISCERNMENT,
        "mean",
        "lower",
        "wilcoxon",
        "kinds",
        kind_discernment,
    ),
    Measure(
        "detection_failure",
        "Single answer: perturbations not scored lower",
        PartKind.FBI_SINGLE,
        "share",
        "higher",
        "mcnemar",
        "perturbation x criterion",
        detection_failures,
    ),
    Measure(
        "invariant_success",
        "Score-invariant kinds: score kept",
        PartKind.FBI_SINGLE,
        "share",
        "lower",
        "mcnemar",
        "perturbation x criterion",
        invariant_successes,
        "no data: no perturbation of a score-invariant kind was scored",
    ),
    Measure(
        "reference_failure",
        "Reference-guided: perturbations still given the maximum",
        PartKind.FBI_REFERENCE,
        "share",
        "higher",
        "mcnemar",
        "perturbation x criterion",
        reference_failures,
    ),
    Measure(
        "pairwise_failure",
        "Pairwise: original not preferred in both orders",
        PartKind.FBI_PAIRWISE,
        "share",
        "higher",
        "mcnemar",
        "pairs",
        pairwise_failures,
    ),
    Measure(
        "position_flip",
        "Position bias: verdicts that flip with the order",
        PartKind.FBI_PAIRWISE,
        "share",
        "higher",
        "mcnemar",
        "pairs",
        order_flips,
    ),
    Measure(
        "s_t_delta",
        "S_T deltas (affected aspects; higher is better)",
        PartKind.ASPECT_DELTAS,
        "mean",
        "lower",
        "bootstrap",
        "cell x item",
        s_t_deltas,
        NO_CELLS,
    ),
    Measure(
        "s_f_delta",
        "S_F |deltas| (unaffected aspects; near 0 is better)",
        PartKind.ASPECT_DELTAS,
        "mean",
        "higher",
        "bootstrap",
        "cell x item",
        s_f_deltas,
        NO_CELLS,
    ),
    Measure(
        "cue_resisted",
        "Misleading cue: scores unchanged by the cue",
        PartKind.MISLEADING_CUE,
        "share",
        "lower",
        "mcnemar",
        "text x criterion",
        cue_resisted,
    ),
    Measure(
        "human_error",
        "Distance from the human mean (share of the scale)",
        PartKind.HUMAN_AGREEMENT,
        "mean",
        "higher",
        "bootstrap",
        "text x criterion",
        human_errors,
    ),
    Measure(
        "attack_success_r_plus",
        "Attack success R+ (bad text scored high)",
        PartKind.ADVERSARIAL,
        "share",
        "higher",
        "mcnemar",
        "items",
        lambda e: _attacks(e, "R+"),
    ),
    Measure(
        "attack_success_r_minus",
        "Attack success R- (good text scored low)",
        PartKind.ADVERSARIAL,
        "share",
        "higher",
        "mcnemar",
        "items",
        lambda e: _attacks(e, "R-"),
    ),
    Measure(
        "unparsed",
        "Unparsed replies",
        "",
        "share",
        "higher",
        "mcnemar",
        "calls",
        unparsed,
    ),
]
BY_KEY = {m.key: m for m in MEASURES}


def measure_units(evidence: SubjectEvidence) -> dict[str, Units]:
    """Every measure's units for one subject."""
    return {m.key: m.units(evidence) for m in MEASURES}


def by_kind(units: Units, kind_of: dict[Hashable, str]) -> dict[str, list[float]]:
    """Units grouped by the kind their key belongs to (for the worst-kinds table)."""
    out: dict[str, list[float]] = defaultdict(list)
    for key, value in units.items():
        if key in kind_of:
            out[kind_of[key]].append(value)
    return out
