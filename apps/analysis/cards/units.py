"""Each card figure as values per unit (docs/cards.md): one flag or number per perturbation,
pair, text, kind or call, keyed so the same unit in another judge's audit has the same key.

The card summarises a figure's units (a share with its Wilson interval, a mean with its
bootstrap interval); judges side by side pair their units by key for the paired tests. The
per-unit formulas are the statistics modules' own (``stats.fbi``, ``stats.prompting``,
``reports.discernment``...); nothing is re-derived here.
"""

from __future__ import annotations

import ast
import contextlib
import math
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Literal

from django.db.models import Q

from apps.analysis.cards.evidence import SubjectEvidence
from apps.analysis.definitions import DEFINITIONS, Definition
from apps.analysis.reports import discernment
from apps.analysis.reports.adversarial import search_finals
from apps.analysis.reports.base import Section
from apps.analysis.reports.judge_data import (
    Dim,
    KindInfo,
    RunScores,
    item_deltas,
    kind_infos,
    pairwise_pairs,
)
from apps.analysis.reports.judge_reliability import cell_classes
from apps.analysis.reports.judge_vs_human import judge_means, rating_sources
from apps.analysis.stats import fbi
from apps.analysis.stats.prompting import cue_matches
from apps.catalog.tree import lineage_slugs
from apps.judging.models import JudgeCall, JudgeRun, Method, Technique
from apps.judging.models.audit import PartKind

Units = dict[Hashable, float]


def _first(key: Hashable) -> Hashable:
    """The text a unit belongs to: the first part of its key (a perturbation, a text)."""
    return key[0] if isinstance(key, tuple) else key


def _itself(key: Hashable) -> Hashable:
    return key


@dataclass(frozen=True)
class Measure:
    """A card figure measured per unit; what it means is its definition's (``key``).
    ``test``: the paired test that compares two judges on it; ``cluster``: the text a unit
    belongs to (units of one text are not independent: intervals count each text once)."""

    key: str
    part: str
    summary: Literal["share", "mean"]
    test: Literal["mcnemar", "bootstrap", "wilcoxon"]
    units: Callable[[SubjectEvidence], Units]
    cluster: Callable[[Hashable], Hashable] = _itself
    #: Why a part that ran can still give no unit of this figure.
    empty: str = "nothing of this kind was scored"
    #: A judge whose scores never vary would look good on this figure (no text reaches the
    #: maximum, every score is kept, no cue moves it): it is not measured then.
    needs_variation: bool = False

    @property
    def definition(self) -> Definition:
        return DEFINITIONS[self.key]

    @property
    def label(self) -> str:
        return self.definition.name

    @property
    def worse(self) -> str:
        """Which direction is worse for a judge: "higher" or "lower"."""
        return "higher" if self.definition.better in ("lower", "near 0") else "lower"


def expected_to_lower(data: RunScores) -> Callable[[int, Dim], bool]:
    """Whether a kind should lower a dimension's score: a criterion on an aspect only when
    the aspect is the kind's target or one of its ancestors (its expected impact); a metric,
    or a kind that targets no aspect, always."""
    lineage = lineage_slugs()

    def lowers(kind: int, dim: Dim) -> bool:
        target = data.kinds[kind].target_aspect_id
        aspect = data.dims[dim].aspect
        return not (target and aspect) or aspect in lineage.get(target, [])

    return lowers


def _single_pairs(data: RunScores, invariant: bool) -> tuple[list, list[float], list[float]]:
    lowers = expected_to_lower(data)
    keys, orig, pert = [], [], []
    for (item, perturbation, dim), (kind, score) in data.perturbed.items():
        if (item, dim) not in data.original or data.kinds[kind].score_invariant != invariant:
            continue
        if invariant or lowers(kind, dim):
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
    lowers = expected_to_lower(data)
    for (_, perturbation, dim), (kind, score) in data.perturbed.items():
        if not data.kinds[kind].score_invariant and lowers(kind, dim):
            keys.append((perturbation, dim))
            scores.append(score)
    flags = fbi.reference_guided_failures(scores, run.strategy.scale_max)
    return dict(zip(keys, map(float, flags), strict=True))


def _pairs(evidence: SubjectEvidence) -> dict:
    run = evidence.run(PartKind.FBI_PAIRWISE)
    return pairwise_pairs(run) if run is not None else {}


def pairwise_failures(evidence: SubjectEvidence) -> Units:
    """Per pair shown in both orders, of a kind that should lower the score: 1 unless the
    original won in both (for a score-invariant kind a tie is right: no unit here)."""
    pairs = _pairs(evidence)
    kinds = kind_infos({kind for kind, _ in pairs})
    return {
        key: float(not detected[0])
        for (kind, key), judgements in pairs.items()
        if not kinds[kind].score_invariant and (detected := fbi.detected_in_both([judgements]))
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


def _item_of_cell(key: Hashable) -> Hashable:
    """A delta unit is (cell, item): its cluster is the item."""
    return key[1] if isinstance(key, tuple) else key


def s_t_deltas(evidence: SubjectEvidence) -> Units:
    """Per (S_T cell, item): original minus perturbed score (should be clearly positive)."""
    return _deltas(evidence, "S_T")


def s_f_deltas(evidence: SubjectEvidence) -> Units:
    """Per (S_F cell, item): |original minus perturbed| (should be near 0)."""
    return _deltas(evidence, "S_F")


def kind_results(evidence: SubjectEvidence) -> list[discernment.KindResult]:
    """The discernment part's per-kind p-values (read once per card)."""
    data = evidence.scores(PartKind.DISCERNMENT)
    if data is None:
        return []
    return evidence.memo("kinds", lambda: discernment.kind_results(data, data.by_kind_dim()))


def discernment_section(evidence: SubjectEvidence) -> Section:
    """The discernment report section of the subject's run (built once per card)."""
    data = evidence.scores(PartKind.DISCERNMENT)
    assert data is not None
    return evidence.memo("section", lambda: discernment.section(data, data.by_kind_dim()))


def kind_discernment(evidence: SubjectEvidence) -> Units:
    """Per kind that should lower the score: its discernment D (default combination)."""
    data = evidence.scores(PartKind.DISCERNMENT)
    if data is None or not data.perturbed:
        return {}
    results = kind_results(evidence)
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
    """Per searched item with a result: 1 when the attack succeeded. An item the search
    could not score (no readable candidate) is no unit: not a failed attack."""
    search = evidence.search()
    if search is None or search.direction != direction:
        return {}
    rows = search_finals(Q(search_id=search.pk))
    return {
        row.external_id: float(row.success)
        for row in rows
        if row.method == Method.ADVEVAL and row.has_result
    }


ANSWERED = ("parsed", "unparsed")


def unparsed(evidence: SubjectEvidence) -> Units:
    """Per answered call of the whole audit of this subject: its runs' calls, its
    adversarial search's judge calls (the subject as victim, the gold judge) and generator
    calls (a reply and its format retry count as two calls). 1 when unreadable."""
    part_of = {p.baseline_id: f"{k} baseline" for k, p in evidence.parts.items() if p.baseline_id}
    part_of |= {p.run_id: kind for kind, p in evidence.parts.items() if p.run_id}
    search = evidence.search()
    if search is not None:
        for role, run_id in search.judges.values_list("role", "run_id"):
            part_of.setdefault(run_id, f"search {role}")
    rows = JudgeCall.objects.filter(
        run_id__in=list(part_of), parse_status__in=ANSWERED
    ).values_list("run_id", "identity", "parse_status")
    out: Units = {(part_of[run], key): float(status == "unparsed") for run, key, status in rows}
    outcome = evidence.outcome()
    for key, value in (outcome.generator_call_units() if outcome else {}).items():
        out[key] = value
    return out


def reply_source(key: Hashable) -> str:
    """Whose reply an ``unparsed`` unit is: the judge under audit's, the adversarial search's
    generator's or its gold judge's."""
    where = key[0] if isinstance(key, tuple) else ""
    if where == "generator":
        return "generator"
    return "gold judge" if where == "search gold" else "judge"


NO_CELLS = (
    "a cell counts as S_T or S_F once the study's human comparisons agree with the kind's "
    "expected impact on the aspect (none do yet)"
)
MEASURES = [
    Measure("discernment", PartKind.DISCERNMENT, "mean", "wilcoxon", kind_discernment),
    Measure(
        "detection_failure",
        PartKind.FBI_SINGLE,
        "share",
        "mcnemar",
        detection_failures,
        _first,
    ),
    Measure(
        "invariant_success",
        PartKind.FBI_SINGLE,
        "share",
        "mcnemar",
        invariant_successes,
        _first,
        "no perturbation of a score-invariant kind was scored",
        needs_variation=True,
    ),
    Measure(
        "reference_failure",
        PartKind.FBI_REFERENCE,
        "share",
        "mcnemar",
        reference_failures,
        _first,
        needs_variation=True,
    ),
    Measure(
        "pairwise_failure", PartKind.FBI_PAIRWISE, "share", "mcnemar", pairwise_failures, _first
    ),
    Measure(
        "position_flip",
        PartKind.FBI_PAIRWISE,
        "share",
        "mcnemar",
        order_flips,
        _first,
        needs_variation=True,
    ),
    Measure(
        "s_t_delta",
        PartKind.ASPECT_DELTAS,
        "mean",
        "bootstrap",
        s_t_deltas,
        _item_of_cell,
        NO_CELLS,
    ),
    Measure(
        "s_f_delta",
        PartKind.ASPECT_DELTAS,
        "mean",
        "bootstrap",
        s_f_deltas,
        _item_of_cell,
        NO_CELLS,
        needs_variation=True,
    ),
    Measure(
        "cue_resisted",
        PartKind.MISLEADING_CUE,
        "share",
        "mcnemar",
        cue_resisted,
        _first,
        needs_variation=True,
    ),
    Measure(
        "human_error",
        PartKind.HUMAN_AGREEMENT,
        "mean",
        "bootstrap",
        human_errors,
        _first,
        needs_variation=True,
    ),
    Measure(
        "attack_success_r_plus",
        PartKind.ADVERSARIAL,
        "share",
        "mcnemar",
        lambda e: _attacks(e, "R+"),
    ),
    Measure(
        "attack_success_r_minus",
        PartKind.ADVERSARIAL,
        "share",
        "mcnemar",
        lambda e: _attacks(e, "R-"),
    ),
    Measure("unparsed", "", "share", "mcnemar", unparsed),
]
BY_KEY = {m.key: m for m in MEASURES}


def unit_cluster(measure: Measure, key: Hashable) -> Hashable:
    """The text a unit belongs to, from its key as measured or as a saved card writes it
    (``str`` of the key: a regression gate reads units back from JSON)."""
    if isinstance(key, str) and key.startswith("("):
        with contextlib.suppress(ValueError, SyntaxError):
            key = ast.literal_eval(key)
    return measure.cluster(key)


def measure_units(evidence: SubjectEvidence) -> dict[str, Units]:
    """Every measure's units for one subject; none where its scores cannot move the figure
    (``Measure.needs_variation``)."""
    return {
        m.key: {} if m.needs_variation and evidence.never_varies(m.part) else m.units(evidence)
        for m in MEASURES
    }


def kinds_of_units(evidence: SubjectEvidence, part: str) -> dict[int, KindInfo]:
    """Each perturbed text of a part's run → its kind (units key on the text first)."""
    data = evidence.scores(part)
    if data is None:
        return {}
    return {pert: data.kinds[kind] for (_, pert, _), (kind, _) in data.perturbed.items()}
